"""`herald check` on real devices: our beacon and wearable pass every rule they can show (on Bumble's and
Zephyr's controllers), and Bumble peers built to break one rule each fail exactly that rule."""
import json
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from periods import epoch_just_past
from radio import open_radio

PEERS = Path(__file__).parent / "peers"
sys.path.insert(0, str(PEERS))
from check_peer import FAULTS  # noqa: E402

# A premises name long enough that the venue payload (35 octets) needs Read Blob at ATT_MTU 23.
PREMISES = "Check Bench Diner".encode().hex()
EXTENDED = "10" + f"{len(PREMISES) // 2:02x}" + PREMISES


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def check(herald_bin, path, *args, timeout=120):
    """Runs `herald check --json`; returns (exit status, {rule: verdict}, stderr)."""
    r = subprocess.run([herald_bin, "check", "--transport", f"tty:{path}", "--json", *args],
                       capture_output=True, text=True, timeout=timeout)
    verdicts = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    by_rule = {v["rule"]: v for v in verdicts}
    assert len(by_rule) == len(verdicts), r.stdout
    return r.returncode, by_rule, r.stderr


def identity(proc, role):
    """The identity address a `herald beacon`/`wearable` prints when its controller is ready."""
    deadline = time.monotonic() + 60
    seen = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        m = re.search(rf"{role}: controller ready \(identity ([0-9A-F:]{{17}})\)", line)
        if m:
            return m.group(1)
    raise AssertionError(f"{role} did not start: {''.join(seen)}")


@pytest.fixture(scope="module", params=["bumble", "zephyr"])
def own_devices(request, herald_bin, tmp_path_factory):
    """Our venue beacon and wearable on one radio, each checked with --active from a third controller:
    the beacon by address, then (the beacon stopped) the wearable as the first Herald device heard."""
    kind = request.param
    tmp = tmp_path_factory.mktemp(f"check-{kind}")
    radio = open_radio(kind, 3)
    procs = []
    try:
        beacon = subprocess.Popen([herald_bin, "beacon", "--transport", f"tty:{radio.paths[0]}", "--country", "826",
                                   "--state", "4", "--location-code", "123456", "--extended", EXTENDED, "--interval-ms", "200"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(beacon)
        address = identity(beacon, "beacon")
        report = tmp / "beacon.html"
        beacon_result = check(herald_bin, radio.paths[2], "--address", address, "--duration", "4", "--active",
                              "--report", str(report))
        stop(beacon)
        wearable = subprocess.Popen([herald_bin, "wearable", "--transport", f"tty:{radio.paths[1]}", "--log-dir", str(tmp / "w"),
                                     "--country", "826", "--state", "4", "--epoch", epoch_just_past()],
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(wearable)
        identity(wearable, "wearable")
        time.sleep(1)  # the wearable's advertising, and no one else's
        wearable_result = check(herald_bin, radio.paths[2], "--duration", "4", "--active")
        yield {"kind": kind, "beacon": beacon_result, "beacon_report": report, "wearable": wearable_result}
    finally:
        for p in procs:
            stop(p)
        radio.close()


def assert_passes(result, may_skip):
    status, rules, stderr = result
    bad = {r: (v["status"], v["evidence"]) for r, v in rules.items() if v["status"] in ("fail", "warn")}
    assert status == 0, (stderr, bad)
    assert not bad, bad
    skipped = {r for r, v in rules.items() if v["status"] == "skip"}
    assert skipped == may_skip, {r: rules[r]["evidence"] for r in skipped}
    assert all(v["statement"] and v["source"] and v["evidence"] for v in rules.values())


def test_our_beacon_passes_every_rule(own_devices):
    # A venue payload is fixed: whether it changes at the period boundary does not apply.
    assert_passes(own_devices["beacon"], {"PAY-6"})
    rules = own_devices["beacon"][1]
    assert "Read Blob" in rules["GATT-4"]["evidence"]  # 36 octets at ATT_MTU 23
    assert "country 826, state 4, location 123456" in rules["PAY-3"]["evidence"]
    assert "Check Bench Diner" in rules["PAY-4"]["evidence"]
    html = own_devices["beacon_report"].read_text()
    assert html.startswith("<!DOCTYPE html>") and html.count("<tr class=") == len(rules) and "<svg" in html
    # The table of advertisers names the device by the payload the check read, as `scan --read-payloads` does.
    assert "Herald (not read)" not in html and "venue beacon" in html and "venue 826/4 location 123456" in html


def test_our_wearable_passes_every_rule(own_devices):
    # 21 octets with no extended data: nothing for Read Blob or the extended data rule. The wearable's
    # grid starts just before it (`epoch_just_past`): on the default grid a boundary fell inside the
    # check once in CI, the wearable took a new address, and the check's connection to the address
    # it had heard never came (every rule that needs a link skipped: docs/ci-flakes.md item 22).
    status, rules, _ = own_devices["wearable"]
    may_skip = {"GATT-4", "PAY-4", "PAY-6"}
    assert_passes(own_devices["wearable"], may_skip)
    assert rules["PAY-1"]["evidence"].startswith("Simple (0x10)")


@pytest.fixture(scope="module")
def broken_peers(herald_bin):
    """Two Bumble radios (one would be too busy relaying every advert to every controller), each with half
    the peers and two controllers that check them one after the other: four checks at a time."""
    faults = list(FAULTS)
    half = (len(faults) + 1) // 2
    radios = [open_radio("bumble", half + 2), open_radio("bumble", len(faults) - half + 2)]
    peers, centrals = {}, []
    try:
        for i, fault in enumerate(faults):
            radio, slot = (radios[0], i) if i < half else (radios[1], i - half)
            address = f"F0:00:00:00:{i // 256:02X}:{i % 256 + 1:02X}"
            p = subprocess.Popen([sys.executable, str(PEERS / "check_peer.py"), f"serial:{radio.paths[slot]}", address, fault],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            peers[fault] = (p, address)
        centrals = radios[0].paths[half:] + radios[1].paths[len(faults) - half:]
        for fault, (p, _) in peers.items():
            seen = []
            for line in p.stdout:  # Bumble may warn first ("could not assert DTR" on a pty)
                seen.append(line)
                if "advertising" in line:
                    break
            assert "advertising" in seen[-1], f"{fault}: {''.join(seen)}"

        def run(job):
            central, fault = job
            # Three adverts 2.8 s apart; a whole 4 s pause inside the window.
            duration = {"slow-adverts": "7", "pausing-adverts": "8"}.get(fault, "4")
            return fault, check(herald_bin, central, "--address", peers[fault][1], "--duration", duration, "--active")

        results = {}
        # Four workers, each on its own controller (and radio of its peers): one check at a time each.
        batches = [[(centrals[w], f) for n, f in enumerate(faults) if (n >= half) == (w >= 2) and n % 2 == w % 2] for w in range(4)]
        with ThreadPoolExecutor(4) as pool:
            for batch_results in pool.map(lambda batch: [run(job) for job in batch], batches):
                results.update(dict(batch_results))
        yield results
    finally:
        for p, _ in peers.values():
            stop(p)
        for radio in radios:
            radio.close()


@pytest.mark.parametrize("fault", list(FAULTS))
def test_peer_fails_exactly_its_rule(broken_peers, fault):
    status, rules, stderr = broken_peers[fault]
    failed = sorted(r for r, v in rules.items() if v["status"] == "fail")
    warned = sorted(r for r, v in rules.items() if v["status"] == "warn")
    expected = [FAULTS[fault]] if FAULTS[fault] else []
    assert failed == expected, {r: rules[r]["evidence"] for r in failed}
    assert not warned, {r: rules[r]["evidence"] for r in warned}
    assert status == (1 if expected else 0), stderr
    if expected:
        assert f"failed {expected[0]}" in stderr


HERALD_UUID = "428132af-4746-42d3-801e-4572d65bfd9b"


# Without --active: the reference app whose signal characteristic a check writes (RSSI, payload and a
# 20-octet-fragmented payload message) dies with a segmentation fault (the beacon in two runs, the
# wearable in one, 2026-11-26), run-controllers.sh stops the whole simulation and the check reports the
# controller's port closed. Passive checks (connect, discover, read, disconnect) complete on both.


@pytest.fixture(scope="module")
def reference_devices(herald_bin):
    """herald-for-cpp's wearable and venue beacon on Zephyr's radio, each checked (passively) from its own controller."""
    from radio import ZephyrRadio, apps_available
    # The apps are Zephyr 2.5 builds: they share the 2.5 fixture's radio.
    why = apps_available("zephyr25")
    if why:
        pytest.skip(why)
    radio = ZephyrRadio(2, kind="zephyr25", apps=("herald-cpp-wearable.exe", "herald-cpp-venue-beacon.exe"))
    try:
        # Find both by their adverts (they start advertising 10-20 s into the simulation): the
        # wearable's scan response names it "Herald Wearable".
        scan = subprocess.Popen([herald_bin, "scan", "--transport", f"tty:{radio.paths[0]}", "--active", "--json", "--lines"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        herald, names = set(), {}
        deadline = time.monotonic() + 90
        try:
            for line in scan.stdout:
                r = json.loads(line)
                if HERALD_UUID in r.get("serviceUUIDs", []):
                    herald.add(r["address"])
                if r.get("name"):
                    names[r["address"]] = r["name"]
                wearable = [a for a in herald if "Wearable" in names.get(a, "")]
                if len(herald) >= 2 and wearable or time.monotonic() > deadline:
                    break
        finally:
            stop(scan)
        assert len(herald) == 2 and len(wearable) == 1, (herald, names)
        beacon = (herald - set(wearable)).pop()
        with ThreadPoolExecutor(2) as pool:
            w = pool.submit(check, herald_bin, radio.paths[0], "--address", wearable[0], "--duration", "6")
            b = pool.submit(check, herald_bin, radio.paths[1], "--address", beacon, "--duration", "6")
            yield {"wearable": w.result(), "beacon": b.result()}
    finally:
        radio.close()


def test_reference_wearable_verdicts(reference_devices):
    """The C++ wearable serves the fixed test payload 0x08 with little-endian codes: both flagged
    (warn), decoded as 826/0; its database and links pass."""
    status, rules, stderr = reference_devices["wearable"]
    s = {r: v["status"] for r, v in rules.items()}
    # It ends its links at each restart of its scanning and advertising, now and then mid-discovery
    # (zephyr-bsim README): the check then dumps again on a new link, and GATT-1 names the cut links.
    seen = {r: (v["status"], v["evidence"]) for r, v in rules.items()}
    assert s["PAY-1"] == "warn" and "0x08" in rules["PAY-1"]["evidence"], seen
    assert s["PAY-2"] == "pass" and "13 octets" in rules["PAY-2"]["evidence"], seen
    assert s["PAY-3"] == "warn" and "country 826, state 0" in rules["PAY-3"]["evidence"], seen
    for rule in ("ADV-1", "ADV-2", "ADV-3", "ADV-4", "GATT-1", "GATT-2", "GATT-3", "LINK-1"):
        assert s[rule] == "pass", (rule, rules[rule]["evidence"])
    assert status == 0, stderr  # warnings, no failure


def test_reference_venue_beacon_verdicts(reference_devices):
    """The C++ venue beacon: a venue payload whose codes are little-endian (826/4/123123, flagged), its
    premises name valid extended data read with Read Blob."""
    status, rules, stderr = reference_devices["beacon"]
    s = {r: v["status"] for r, v in rules.items()}
    seen = {r: (v["status"], v["evidence"]) for r, v in rules.items()}
    assert s["PAY-1"] == "pass" and s["PAY-2"] == "pass", seen
    assert s["PAY-3"] == "warn" and "country 826, state 4, location 123123" in rules["PAY-3"]["evidence"]
    assert s["PAY-4"] == "pass" and "Erin's Stakehouse" in rules["PAY-4"]["evidence"]
    assert s["GATT-4"] == "pass"  # 28 octets at ATT_MTU 23
    for rule in ("ADV-1", "ADV-2", "ADV-3", "ADV-4", "GATT-1", "GATT-2", "GATT-3", "LINK-1"):
        assert s[rule] == "pass", (rule, rules[rule]["evidence"])
    assert status == 0, stderr
