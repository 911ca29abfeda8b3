"""Against an independent Herald implementation: herald-for-cpp, the Herald reference for Zephyr
wearables, built as two whole simulated nRF52s (../shared/controllers/zephyr-bsim/apps), on the same
simulated radio as our controllers.

One shared scenario (module fixture, ~3 minutes): the reference's wearable and venue beacon, our
`herald wearable` and our `herald beacon` (both `--byte-order apps`, as the reference writes its codes),
then `herald scan --read-payloads` and `herald sense` beside them. The reference's Herald coordinator
starts about 31 s after boot, so the scenario's first minute is mostly waiting, shared by every test.

What the reference does to us is read from its log (`didRead: <target> with payload: <hex>`). Its own
defects decide how often it reads us (README "Tested against the Herald reference implementation"):
the figures are printed (run with -s) and asserted as floors where the reference allows one.
"""
import base64
import contextlib
import json
import os
import re
import subprocess
import time
from datetime import datetime, timezone

import pytest

import snoop
from reference_crash import ReferenceCrashed, known_reference_crash

from radio import ZephyrRadio, apps_available, wanted_kinds
from test_wearable import Lines, events, stop, windows_with_readings

pytestmark = [pytest.mark.timeout(420)]

CPP_WEARABLE_PAYLOAD = "083a030000d202964900000000"          # fixed test payload 0x08: 826/0, client 1234567890
CPP_BEACON_PAYLOAD = "303a030400f3e00100" + "1011" + "Erin's Stakehouse".encode().hex()   # 826/4/123123
OUR_BEACON_PAYLOAD = "303a030400b17f3900"                    # 826/4/3768241, little-endian (--byte-order apps)
PERIOD = 30           # our wearable's payload (and address) period in this scenario
MEASURED_FOR = 120.0  # seconds of 30 s windows in which our wearable must measure each reference device
DID_READ = re.compile(r"didRead: .* with payload: ([0-9a-f]+)")
SIMULATED_TIME = re.compile(rb"d_\d+: @(\d+:\d+:\d+\.\d+)")


def short_name(payload_hex):
    """The Herald apps' payload short name: Base64 of everything after the 3-byte header, 6 characters."""
    return base64.b64encode(bytes.fromhex(payload_hex)[3:]).decode()[:6]


def reference_reads(log_path):
    """(simulated seconds, payload hex) of every payload the reference app's log says it read."""
    reads = []
    with open(log_path, "rb") as f:
        for raw in f:
            line = raw.decode("utf-8", "replace")
            m = DID_READ.search(line)
            if m:
                t = re.search(r"@(\d+):(\d+):(\d+\.\d+)", line)
                seconds = int(t[1]) * 3600 + int(t[2]) * 60 + float(t[3]) if t else None
                reads.append((seconds, m[1]))
    return reads


def _scan_misses(out):
    """The reference payloads a `herald scan --json --summary-only` output lacks."""
    try:
        payloads = {d.get("payload") for d in json.loads(out)["summary"]["devices"]}
    except (ValueError, KeyError):
        return [CPP_WEARABLE_PAYLOAD, CPP_BEACON_PAYLOAD]
    return [p for p in (CPP_WEARABLE_PAYLOAD, CPP_BEACON_PAYLOAD) if p not in payloads]


def _scan_outcomes(out):
    """(address, payload, error) of each device a `herald scan --json --summary-only` output lists."""
    try:
        return [(d["address"], d.get("payload"), d.get("payloadError")) for d in json.loads(out)["summary"]["devices"]]
    except (ValueError, KeyError):
        return out


def _scan_read_both(out):
    return not _scan_misses(out)


@pytest.fixture(scope="module")
def scenario(herald_bin, tmp_path_factory):
    # The apps are Zephyr 2.5 builds: they share the 2.5 fixture's radio.
    why = apps_available("zephyr25") if "zephyr25" in wanted_kinds(("zephyr25",)) else \
        "runs on Zephyr 2.5's radio only (the apps are simulated nRF52s built with Zephyr 2.5)"
    if why:
        pytest.skip(why)
    # The reference wearable can crash on its own (reference_crash.py), which ends the whole simulation:
    # then the scenario runs once more, and only a second such crash makes the module's tests expected
    # failures that name it. Any other end of the radio stays a failure.
    crash = None
    for attempt in (1, 2):
        try:
            with reference_scenario(herald_bin, tmp_path_factory.mktemp("reference-cpp")) as out:
                yield out
                return
        except ReferenceCrashed as e:
            crash = str(e)
            print(f"\nreference scenario: try {attempt} ended with the reference's own crash: {crash}")
    pytest.xfail(f"the reference C++ wearable crashed in both tries with its known bug (docs/ci-flakes.md item 16): {crash}")


@contextlib.contextmanager
def reference_scenario(herald_bin, logs):
    # Controllers: 0 our wearable, 1 our beacon, 2 scan, 3 sense; then the reference's two apps.
    radio = ZephyrRadio(4, kind="zephyr25", apps=("herald-cpp-wearable.exe", "herald-cpp-venue-beacon.exe"))
    started = time.monotonic()
    procs = []
    out = {"radio": radio, "logs": logs}
    try:
        beacon = Lines([herald_bin, "beacon", "--transport", f"tty:{radio.paths[1]}", "--country", "826", "--state", "4",
                        "--location-code", "3768241", "--byte-order", "apps", "--json"], parse_json=True)
        procs.append(beacon)
        # A 30 s payload period: the reference reads an address of ours at most once (the bt_conn reference it
        # leaks then refuses it), so each rotation is one more chance for it within the scenario.
        epoch = datetime.fromtimestamp(time.time() - 1, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        wearable = Lines([herald_bin, "wearable", "--transport", f"tty:{radio.paths[0]}", "--log-dir", str(logs / "wearable"),
                          "--json", "--byte-order", "apps", "--btsnoop", str(logs / "wearable.btsnoop"),
                          "--payload-period", str(PERIOD), "--epoch", epoch], parse_json=True)
        procs.append(wearable)
        wearable.wait_for(lambda e: e.get("event") == "ready", timeout=30)
        beacon.wait_for(lambda e: e.get("event") == "ready", timeout=30)
        # Our bench tools beside them from the start, decoding both with the reference's byte order. The
        # scan connects to each advertiser once: it does so while the reference apps only advertise (their
        # coordinators start at ~31 s), as a later attempt can meet a reference busy with its own links
        # (LE Connection Complete 0x3E).
        scan = subprocess.Popen([herald_bin, "scan", "--transport", f"tty:{radio.paths[2]}", "--duration", "40", "--summary-only",
                                 "--json", "--read-payloads", "--byte-order", "apps", "--btsnoop", str(logs / "scan.btsnoop")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        sense = Lines([herald_bin, "sense", "--transport", f"tty:{radio.paths[3]}", "--json", "--quiet", "--byte-order", "apps",
                       "--duration", "40"], parse_json=True)
        procs.append(sense)
        # The reference apps advertise from ~16 s after boot: our wearable reads both soon after.
        t_wearable, _ = wearable.wait_for(lambda e: e.get("event") == "didRead" and e.get("payload") == CPP_WEARABLE_PAYLOAD, timeout=120)
        t_beacon, _ = wearable.wait_for(lambda e: e.get("event") == "didRead" and e.get("payload") == CPP_BEACON_PAYLOAD, timeout=120)
        first = max(t_wearable, t_beacon)
        # Two minutes of 30 s windows after both are read.
        while time.monotonic() < first + MEASURED_FOR + 1:
            # (The reference's own crash is told apart below, where every failure of the scenario goes.)
            assert radio.proc.poll() is None, f"the simulation stopped: {radio.ended()}; {open(radio.log.name).read()[-800:]}"
            time.sleep(1)
        scan_out, scan_err = scan.communicate(timeout=60)
        scan_code = scan.returncode
        # A reference app busy with its own links can end the scan's link before its first packet
        # (0x3E), or end it itself on its periodic restart (0x13), on every one of the scan's four tries
        # (docs/reference-cpp-captures.md): then one more scan, the simulation still running, and the
        # test judges that one. Each scan must decode what it read.
        if scan_code == 0 and not _scan_read_both(scan_out):
            again = subprocess.run([herald_bin, "scan", "--transport", f"tty:{radio.paths[2]}", "--duration", "40",
                                    "--summary-only", "--json", "--read-payloads", "--byte-order", "apps",
                                    "--btsnoop", str(logs / "scan-again.btsnoop")],
                                   capture_output=True, text=True, timeout=90)
            print(f"\nscan: a second scan after {_scan_misses(scan_out)}: {_scan_outcomes(scan_out)}")
            scan_code, scan_out, scan_err = again.returncode, again.stdout, again.stderr
        sense.proc.wait(60)
        out.update(wearable=wearable, beacon=beacon, first=first, t_read={"wearable": t_wearable, "beacon": t_beacon},
                   scan=(scan_code, scan_out, scan_err), sense=sense, started=started)
        out["stopping"] = time.monotonic()
        stop(wearable.proc)
        stop(beacon.proc)
        out["app_logs"] = [radio.app_log(0), radio.app_log(1)]
        out["wearable_reads"] = reference_reads(radio.app_log(0))
        out["simulation_alive"] = radio.proc.poll() is None
        out["ended"] = radio.ended()
        radio.keep_logs(logs / "radio")  # both apps' logs beside our captures
        crash = known_reference_crash(out["ended"], radio.app_log(0))
        if crash:
            raise ReferenceCrashed(crash)
        out["elapsed"] = time.monotonic() - started
        print(f"\nreference scenario: {out['elapsed']:.0f} s")
    except Exception as e:
        # A wait that timed out, or a stopped simulation, because the reference's crash had ended the
        # radio is that crash.
        crash = None if isinstance(e, ReferenceCrashed) else known_reference_crash(radio.ended(), radio.app_log(0))
        shut_down(procs, radio)
        if crash:
            raise ReferenceCrashed(crash) from e
        raise
    try:
        yield out
    finally:
        shut_down(procs, radio)


def shut_down(procs, radio):
    for p in procs:
        stop(p.proc)
    radio.close()


def test_our_wearable_reads_and_measures_the_reference_wearable(scenario):
    w = scenario["wearable"]
    reads = [e for _, e in events(w, "didRead") if e["payload"] == CPP_WEARABLE_PAYLOAD]
    assert reads[0]["decoded"] == "test 826/0 client 1234567890", reads[0]
    assert reads[0]["kind"] == "herald-wearable"
    target = reads[0]["target"]
    per_window = windows_with_readings(w, target, scenario["first"], scenario["first"] + MEASURED_FOR)
    detected = events(w, "didDetect", target)[0][0]
    print(f"\nreference wearable: read {scenario['t_read']['wearable'] - scenario['started']:.1f} s after start, "
          f"{scenario['t_read']['wearable'] - detected:.2f} s after first heard; "
          f"readings per 30 s window {per_window}")
    assert len(per_window) == 4 and all(c >= 1 for c in per_window), per_window


def test_our_wearable_reads_and_measures_the_reference_beacon(scenario):
    w = scenario["wearable"]
    reads = [e for _, e in events(w, "didRead") if e["payload"] == CPP_BEACON_PAYLOAD]
    assert reads[0]["decoded"] == "venue 826/4 location 123123 \"Erin's Stakehouse\"", reads[0]
    assert reads[0]["kind"] == "venue-beacon"
    per_window = windows_with_readings(w, reads[0]["target"], scenario["first"], scenario["first"] + MEASURED_FOR)
    detected = events(w, "didDetect", reads[0]["target"])[0][0]
    print(f"\nreference beacon: read {scenario['t_read']['beacon'] - scenario['started']:.1f} s after start, "
          f"{scenario['t_read']['beacon'] - detected:.2f} s after first heard; "
          f"readings per 30 s window {per_window}")
    assert len(per_window) == 4 and all(c >= 1 for c in per_window), per_window


def legacy_reports(btsnoop):
    """(address, is scan response, data) of every LE Advertising Report our controller gave our host."""
    out = []
    for received, h4 in snoop.packets(btsnoop):
        # H4 event, LE Meta, subevent 0x02 with one report (controllers send one a time).
        if not received or len(h4) < 14 or h4[0] != 0x04 or h4[1] != 0x3E or h4[3] != 0x02 or h4[4] != 1:
            continue
        kind, address = h4[5], ":".join(f"{b:02X}" for b in reversed(h4[7:13]))
        out.append((address, kind == 0x04, h4[14:14 + h4[13]]))
    return out


def test_one_reading_per_advertising_event_and_one_scan_response_per_address(scenario):
    """The reference wearable answers our scan requests while we scan actively, which we do only until
    an address has answered one (`HeraldCentral+Scanning`): its scan response (it names it "Herald
    Wearable") arrives, then our scan turns passive and its adverts come alone. One reading per
    advertising event: as many didMeasure events for it as ADV_IND reports in our own capture (counting
    scan responses too gave about twice as many while every advert drew one)."""
    w = scenario["wearable"]
    reports = legacy_reports(scenario["logs"] / "wearable.btsnoop")
    named = {a for a, rsp, data in reports if rsp and b"Herald Wearable" in data}
    assert len(named) == 1, named
    address = named.pop()
    adverts = sum(1 for a, rsp, _ in reports if a == address and not rsp)
    responses = sum(1 for a, rsp, _ in reports if a == address and rsp)
    target = [e for _, e in events(w, "didRead") if e["payload"] == CPP_WEARABLE_PAYLOAD][0]["target"]
    readings = len(events(w, "didMeasure", target))
    print(f"\nreference wearable {address}: {adverts} ADV_IND and {responses} SCAN_RSP reports, {readings} readings")
    # Scanning actively throughout drew a scan response for most adverts (more than half, on both radios).
    assert adverts >= 100 and responses <= adverts // 10, (adverts, responses)
    assert abs(readings - adverts) <= 2, (readings, adverts, responses)


def reference_read_outcomes(log_path):
    """How many payload reads the reference wearable started (after its GATT discovery found the payload
    characteristic) and how many of those its own stack broke before a value came back: a read that
    ends in `GATT read error` (the link gone under it), or one whose callback comes back empty ("has no
    payload data") when the reference has closed links itself (0x16, "We closed the connection
    ourselves"): since the read began, or at the same simulated instant as the empty callback, which
    Zephyr's host runs while the reference's periodic restart of scanning and advertising drops every
    link, before the disconnections are logged (CI: read started 34.251 s, restart 34.259 s, empty
    callback and the 0x16 closes at 34.281 s). An empty read with no close of the reference's own is
    not counted as broken: that one would be ours."""
    started = failed = 0
    closed_by_itself = False
    empty_at = None  # the instant of an empty callback not yet explained by a close of its own
    with open(log_path, "rb") as f:
        for raw in f:
            at = SIMULATED_TIME.match(raw)
            if b"FOUND Herald read characteristic. Reading." in raw:
                started += 1
                closed_by_itself, empty_at = False, None
            elif b"We closed the connection ourselves" in raw:
                closed_by_itself = True
                if empty_at is not None and at and at[1] == empty_at:
                    failed += 1
                    empty_at = None
            elif b"GATT read error" in raw:
                failed += 1
            elif b"has no payload data" in raw:
                if closed_by_itself:
                    failed += 1
                else:
                    empty_at = at[1] if at else None
    return started, failed


def test_every_read_the_reference_wearable_completes_gets_our_payload(scenario):
    """The reference reads us only as often as its own defects allow (README: its restart of scanning
    and advertising cuts discoveries that run into its break, and a bt_conn reference it leaks then
    refuses every later connection to that address). What is ours: every read it starts and does not
    break itself ends in a didRead, and what it read of us is exactly what we serve."""
    reads = scenario["wearable_reads"]
    started, failed = reference_read_outcomes(scenario["app_logs"][0])
    w = scenario["wearable"]
    names = {e["payload"] for _, e in w.lines if e.get("event") in ("ready", "ownPayload")}
    ours_beacon = [t for t, p in reads if p == OUR_BEACON_PAYLOAD]
    ours_wearable = [t for t, p in reads if short_name(p) in names]
    minutes = scenario["elapsed"] / 60
    print(f"\nreference wearable: {started} reads started, {failed} broken by its own stack, {len(reads)} didRead; "
          f"our beacon {len(ours_beacon)} (at {ours_beacon} s simulated), our wearable {len(ours_wearable)} "
          f"({len(ours_wearable) / minutes:.2f}/min, at {ours_wearable} s simulated)")
    # The floor that is ours: every read the reference starts and its own stack does not break returns.
    # How many it starts is its race with its own break: 1, 0, 4, 1, 0 and 3 reads of our wearable in six
    # runs of this scenario, and 0, 0 and 0 against the rebuilt reference (patches 03/04: its attempts went
    # unanswered; docs/reference-cpp-captures.md), so a count of reads is printed, not asserted.
    assert len(reads) == started - failed, (started, failed, reads)
    known = {OUR_BEACON_PAYLOAD, CPP_BEACON_PAYLOAD}
    assert all(p in known or short_name(p) in names for _, p in reads), reads


def test_our_roles_served_every_connection_the_reference_made(scenario):
    """Each link the reference wearable opened to our beacon or wearable ended from its side (0x13,
    0x16 are the reasons we see when the peer or its controller ends it; 0x08 a supervision timeout),
    never because we dropped it."""
    for role in ("beacon", "wearable"):
        # Before we stopped our roles: stopping ends each link from our side (0x16), as it should.
        ends = [e for t, e in scenario[role].lines
                if e.get("event") == "disconnected" and e.get("role") == "peripheral" and t < scenario["stopping"]]
        print(f"\nour {role}: {len(ends)} peripheral links ended, reasons {sorted({e['reason'] for e in ends})}")
        assert all(e["reason"] in (0x08, 0x13, 0x3E) for e in ends), ends


def test_the_reference_apps_kept_running(scenario):
    """A crash of either app stops the whole simulation."""
    assert scenario["simulation_alive"], scenario["ended"]


def test_scan_decodes_both_with_the_apps_byte_order(scenario):
    code, out, err = scenario["scan"]
    assert code == 0, err
    devices = json.loads(out)["summary"]["devices"]
    by_payload = {d.get("payload"): d for d in devices}
    w = by_payload.get(CPP_WEARABLE_PAYLOAD)
    b = by_payload.get(CPP_BEACON_PAYLOAD)
    assert w and b, _scan_outcomes(out)
    assert w["kind"] == "herald-wearable" and w["payloadText"] == "test 826/0 client 1234567890", w
    assert w["payloadFields"]["clientIdentifier"] == 1234567890
    assert b["kind"] == "venue-beacon" and b["payloadText"] == "venue 826/4 location 123123 \"Erin's Stakehouse\"", b
    assert b["payloadFields"]["premisesName"] == "Erin's Stakehouse"


def test_sense_decodes_both_with_the_apps_byte_order(scenario):
    reads = {e["payload"]: e for _, e in scenario["sense"].lines if e.get("event") == "read"}
    assert reads.get(CPP_WEARABLE_PAYLOAD, {}).get("decoded") == "test 826/0 client 1234567890", reads
    assert reads.get(CPP_BEACON_PAYLOAD, {}).get("decoded") == "venue 826/4 location 123123 \"Erin's Stakehouse\"", reads
