"""A `herald wearable` among centrals that misuse it, with benign peers whose reading must go on.

One scenario per controller kind (module fixture, ~110 s each): wearable W and a Herald phone P1; then
five centrals (more than the two links W leaves to centrals) that connect to W and say nothing, reconnecting whenever
dropped, for 55 s; a polite central R that reads W's payload every 3 s throughout; a second phone P2
that arrives 20 s into the silent centrals' siege. Then a central that floods W with ATT requests and
one that connects and disconnects in a loop, for 35 s, on two of the silent centrals' controllers.

On Zephyr 2.5's radio (`zephyr25`) the Herald reference's C++ wearable (zephyr-bsim/apps) is a second
benign peer: W reads it before the siege begins and must go on measuring it in every window.

The policy under test (`InboundLinkPolicy`, README "Links"): W keeps three of its five links for its
own central role, drops an inbound link after 10 s without a PDU, and refuses for 60 s a central that
never said anything. W's capture (`--btsnoop`) and counters at exit (`--stats`) show what it did.
The same capture checks that no advert, active scan or connection request of W's went out while its
identity address was the controller's random address.
"""
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import snoop
from reference_crash import ReferenceCrashed, known_reference_crash
from radio import ZephyrRadio, apps_available, open_radio
from test_reference_cpp import CPP_WEARABLE_PAYLOAD
from test_wearable import ANDROID_PAYLOAD, Lines, events, keep, phone, stop, target_of_payload, wearable, windows_with_readings

PEERS = Path(__file__).parent / "peers"
pytestmark = pytest.mark.timeout(300)

P2_PAYLOAD = "10" + "033a" + "0000" + "c3" * 16
SILENT = 5
SIEGE = 55.0
FLOOD = 35.0
LINKS, KEPT_FOR_CENTRAL, IDLE_BOUND = 5, 3, 10.0


# The reference C++ wearable's advert lists the 16-bit services 0x1801 and 0x1800; ours does not.
REFERENCE_ADVERT_MARK = "050301180018"


def hostile(kind, mode, seconds, paths, *extra):
    # An attempt on an address W has since changed (its resolvable private address turns over each
    # 360 s period, so about one run in four) is cancelled after 5 s and W is found again by its advert.
    # Without the bound, R once waited on W's old address to the end of its run on Zephyr's radio;
    # on Bumble's, in CI's run of a9e2206, R, the flood and the churn all stopped connecting 5 s into the
    # flood (the churn's last attempt stayed pending 30 s, to the end); W held no link at exit. A new
    # address of W's then explains it (no capture was kept). Bumble's controller cancels as the Core
    # says since peers/controllers.py made it so (docs/ci-flakes.md item 15).
    bound = ["--connect-timeout", "5"]
    # The centrals besiege W only: the reference wearable, also a Herald advertiser from a resolvable
    # private address, crashed (a NULL dereference, the whole radio with it) when a silent central's
    # link to it timed out (docs/reference-cpp-captures.md).
    spare = ["--spare", REFERENCE_ADVERT_MARK] if kind == "zephyr25" else []
    return Lines([sys.executable, str(PEERS / "hostile_central.py"), mode, str(seconds)] + bound + spare
                 + list(extra) + [f"serial:{p}" for p in paths])


def finish(p, seconds):
    """Waits for a peer process to end by itself; one that hangs (a pty that stopped taking bytes)
    is stopped, which the tests then see in its lines."""
    try:
        p.proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        print(f"\n{p.proc.args[2]}: still running after {seconds} s; stopped")
        stop(p.proc)


def stats(w):
    for line in w.stderr.splitlines():
        if line.startswith("herald-stats: "):
            return json.loads(line[len("herald-stats: "):])
    raise AssertionError("no herald-stats line: " + w.stderr[-2000:])


def open_radio_with_reference(kind, count):
    """`count` controllers of `kind`; on Zephyr 2.5's radio, with the reference's C++ wearable beside them
    (its apps are 2.5 builds and run on no other radio)."""
    if kind != "zephyr25":
        return open_radio(kind, count)
    why = apps_available(kind)
    if why:
        pytest.skip(why)
    return ZephyrRadio(count, kind=kind, apps=("herald-cpp-wearable.exe",))


def reference_in(scenario):
    if not scenario["reference"]:
        pytest.skip("the reference C++ wearable runs on Zephyr 2.5's radio only")
    return scenario["reference"]


@pytest.fixture(scope="module", params=["bumble", "zephyr", "zephyr25"])
def scenario(request, herald_bin, tmp_path_factory):
    kind = request.param
    # On Zephyr 2.5's radio the reference C++ wearable can crash on its own (reference_crash.py), which
    # ends the whole simulation: then the scenario runs once more, and only a second such crash makes
    # the module's tests expected failures that name it. Any other end of the radio stays a failure.
    crash = None
    for attempt in (1, 2):
        try:
            return run_scenario(kind, herald_bin, tmp_path_factory.mktemp(f"hostile-{kind}"))
        except ReferenceCrashed as e:
            crash = str(e)
            print(f"\n{kind}: try {attempt} ended with the reference's own crash: {crash}")
    pytest.xfail(f"the reference C++ wearable crashed in both tries with its known bug (docs/ci-flakes.md item 16): {crash}")


def run_scenario(kind, herald_bin, logs):
    # W, P1, P2, R, and the silent centrals (the flood and the churn reuse two of theirs).
    radio = open_radio_with_reference(kind, 4 + SILENT)
    procs = []
    try:
        w = wearable(herald_bin, radio.paths[0], logs / "w", "--btsnoop", str(logs / "w.btsnoop"), "--stats")
        procs.append(w)
        p1, t_p1 = phone(radio.paths[1], "C1:00:00:00:00:01", "android", ANDROID_PAYLOAD)
        procs.append(p1)
        w.wait_for(lambda e: e.get("event") == "didRead" and e.get("payload") == ANDROID_PAYLOAD, timeout=30)
        reference = None
        if kind == "zephyr25":
            # The reference advertises from ~16 s of simulated time after boot: W reads it before the siege.
            w.wait_for(lambda e: e.get("event") == "didRead" and e.get("payload") == CPP_WEARABLE_PAYLOAD, timeout=120)
            reference = radio.app_log(0)
        siege_paths = radio.paths[4:4 + SILENT]
        t_siege = time.monotonic()
        silent = hostile(kind, "silent", SIEGE, siege_paths)
        # R exchanges ATT_MTU before each read, as a phone's Herald app does: the moment at which a whole
        # simulation was reported to end (issue 36 item 13, docs/ci-flakes.md).
        reader = hostile(kind, "reader", SIEGE + FLOOD + 5, [radio.paths[3]], "--mtu", "247")
        procs += [silent, reader]
        time.sleep(20)
        p2, t_p2 = phone(radio.paths[2], "C2:00:00:00:00:02", "android", P2_PAYLOAD)
        procs.append(p2)
        finish(silent, SIEGE + 15)
        t_flood = time.monotonic()
        flood = hostile(kind, "flood", FLOOD, siege_paths[-1:])
        churn = hostile(kind, "churn", FLOOD, siege_paths[-2:-1])
        procs += [flood, churn]
        for p in (flood, churn, reader):
            finish(p, FLOOD + 15)
        end = time.monotonic()
        # The hostile and polite centrals are gone (the reference wearable may still be reading W):
        # whatever else W still holds now is a leak.
        time.sleep(3)
        ended = radio.ended()
        crash = known_reference_crash(ended, reference) if reference else None
        stop(w.proc, signal.SIGINT)
        for p in procs:
            stop(p.proc)
        radio.close()
        radio.keep_logs(logs / "radio")
        procs, radio = [], None
        keep(logs, silent=silent, reader=reader, flood=flood, churn=churn, p1=p1, p2=p2)
        if crash:
            raise ReferenceCrashed(crash)
        return dict(kind=kind, w=w, p1=p1, p2=p2, t_p1=t_p1, t_p2=t_p2, silent=silent, reader=reader, flood=flood,
                    churn=churn, t_siege=t_siege, t_flood=t_flood, end=end, capture=logs / "w.btsnoop",
                    reference=reference, ended=ended)
    except ReferenceCrashed:
        raise
    except Exception as e:
        # A wait that timed out because the reference's crash had ended the radio is that crash.
        crash = known_reference_crash(radio.ended(), radio.app_log(0)) if radio and kind == "zephyr25" else None
        if crash:
            raise ReferenceCrashed(crash) from e
        raise
    finally:
        for p in procs:
            stop(p.proc)
        if radio:
            radio.close()


def lines_of(p, event):
    return [(t, l.split()) for t, l in p.lines if l.startswith(event + " ")]


def summary(p):
    counts = {}
    for _, l in p.lines:
        counts[l.split()[0]] = counts.get(l.split()[0], 0) + 1
    return counts


def test_what_happened(scenario):
    """Prints the run: each peer's events and W's links (run with -s)."""
    for name in ("silent", "reader", "flood", "churn"):
        print(f"\n{scenario['kind']}: {name}: {summary(scenario[name])}; last {[l for _, l in scenario[name].lines[-3:]]}")
    links = snoop.links(scenario["capture"])
    t0 = links[0].up if links else 0
    for l in links[:120]:
        print(l.handle, l.role, l.peer, round(l.up - t0, 2), l.down and round(l.down - t0, 2), l.reason, l.att_received, l.att_own)


def test_the_radio_lived_through_it(scenario):
    """No simulation process (controller, phy, pacer) and no Bumble controller ended by itself."""
    assert scenario["ended"] is None, scenario["ended"]


def test_phone_arriving_during_the_siege_is_read_within_15_s(scenario):
    w = scenario["w"]
    reads = [t for t, e in events(w, "didRead") if e.get("payload") == P2_PAYLOAD]
    assert reads, f"P2 never read; W read {[e.get('payload') for _, e in events(w, 'didRead')]}"
    delay = min(reads) - scenario["t_p2"]
    print(f"\n{scenario['kind']}: P2 advertising to didRead {delay:.2f} s")
    assert delay <= 15, delay


def test_first_phone_measured_in_every_window(scenario):
    w = scenario["w"]
    counts = windows_with_readings(w, target_of_payload(w, ANDROID_PAYLOAD), scenario["t_siege"], scenario["end"])
    print(f"\n{scenario['kind']}: P1 readings per 30 s window from the siege on {counts}")
    assert counts and all(c >= 1 for c in counts), counts


def test_reference_wearable_measured_in_every_window(scenario):
    """The reference's C++ wearable, read before the siege, is measured by W in every 30 s window
    through the siege, the flood and the churn (W's central role keeps its two links)."""
    reference_in(scenario)
    w = scenario["w"]
    counts = windows_with_readings(w, target_of_payload(w, CPP_WEARABLE_PAYLOAD), scenario["t_siege"], scenario["end"])
    reads = [t for t, e in events(w, "didRead") if e.get("payload") == CPP_WEARABLE_PAYLOAD and t >= scenario["t_siege"]]
    print(f"\n{scenario['kind']}: reference wearable readings per 30 s window from the siege on {counts}; "
          f"read again {len(reads)} times")
    assert counts and all(c >= 1 for c in counts), counts


def test_independent_central_reads_the_payload_in_every_window(scenario):
    """R reads W within the idle bound (plus a reconnection race) of the siege starting, then in
    every 30 s window, through the siege, the flood and the churn."""
    reader = scenario["reader"]
    reads = [t for t, words in lines_of(reader, "read")]
    fails = [words for _, words in lines_of(reader, "failed")]
    print(f"\n{scenario['kind']}: R read W {len(reads)} times, {len(fails)} attempts failed")
    assert reads, (fails, reader.stderr[-2000:])
    assert all(words[3].startswith("10") for _, words in lines_of(reader, "read"))  # a Simple payload
    # The siege begins when the first silent central is in (Bumble hosts take a while to start).
    began = min((t for t, _ in lines_of(scenario["silent"], "connected")), default=scenario["t_siege"])
    first = min(reads) - began
    print(f"{scenario['kind']}: R's first read {first:.1f} s after the first silent central got in")
    assert first <= IDLE_BOUND + 20, first
    counts = []
    t0 = min(reads)
    while t0 + 30 <= scenario["end"]:
        counts.append(sum(1 for t in reads if t0 <= t < t0 + 30))
        t0 += 30
    print(f"{scenario['kind']}: R reads per 30 s window {counts}")
    assert counts and all(c >= 1 for c in counts), counts


def test_silent_centrals_never_hold_the_links_kept_for_the_central(scenario):
    """At most LINKS - KEPT_FOR_CENTRAL peripheral links are kept (one more may be up for the
    moment it takes to refuse it), and a link on which the central sent nothing ends within the
    idle bound."""
    links = snoop.links(scenario["capture"])
    inbound = [l for l in links if l.role == "peripheral"]
    # How long each silent link lasted until W asked to end it (or it ended otherwise): the
    # controller's own Disconnection Complete can lag by connection events, and on a loaded machine
    # by seconds of simulated radio.
    # Silent: the central sent nothing of its own (answers to a read of W's are not speaking,
    # `LEStack.answersUs`).
    silent_ones = [l for l in inbound if l.att_own == 0 and (l.asked or l.down) is not None]
    longest = max(((l.asked or l.down) - l.up for l in silent_ones), default=0)
    s = stats(scenario["w"])
    connected = len(lines_of(scenario["silent"], "connected"))
    print(f"\n{scenario['kind']}: {len(inbound)} inbound links ({connected} by the silent centrals), peak "
          f"{snoop.peak_links(links, 'peripheral')} inbound / {snoop.peak_links(links)} in all; longest silent link "
          f"{longest:.1f} s; idleLinksDropped {s['idleLinksDropped']}, refusedInboundLinks {s['refusedInboundLinks']}")
    assert connected >= LINKS - KEPT_FOR_CENTRAL, "the silent centrals never got in: the test tested nothing"
    # Counted until W asked to end a link: a refused link stays up for the connection events the
    # controller needs to end it (seconds, on a loaded machine's simulated radio).
    kept = [snoop.Link(l.handle, l.role, l.peer, l.up, l.asked or l.down) for l in links]
    assert snoop.peak_links(kept, "peripheral") <= LINKS - KEPT_FOR_CENTRAL
    assert snoop.peak_links(links) <= LINKS
    # W's timer is exact (InboundLinkPolicyTests); here the wearable's process shares two loaded
    # cores with nine simulated controllers and their hosts, and has been seen to act 2.8 s late.
    assert longest <= IDLE_BOUND + 3, longest
    assert s["idleLinksDropped"] >= LINKS - KEPT_FOR_CENTRAL, s


def test_flood_and_churn_leave_nothing_behind(scenario):
    """The flooding and the churning centrals got in (the test can fail), and at exit W holds no link,
    ACL credit or queued packet, and its device database holds only devices that advertise."""
    flood, churn = scenario["flood"], scenario["churn"]
    churned = len(lines_of(churn, "connected"))
    flooded = len(lines_of(flood, "connected"))
    s = stats(scenario["w"])
    print(f"\n{scenario['kind']}: flood connected {flooded} times, churn {churned} times; W at exit {s}")
    assert flooded >= 1 and churned >= 2, (flood.lines[-5:], churn.lines[-5:])
    assert scenario["w"].proc.returncode == 0, scenario["w"].stderr[-2000:]
    assert s["connections"] == 0 and s["creditsInFlight"] == 0 and s["aclQueued"] == 0, s
    assert s["droppedCommands"] == 0, s
    # P1, P2 and W's own (and the reference wearable): the centrals that connected to W never
    # advertised and are not devices.
    assert s["devices"] <= 4 + bool(scenario["reference"]), s


def test_no_identity_address_on_air(scenario):
    """Every advert, active scan and connection request W asked for went out from a resolvable
    private address: never while the controller's random address was still the identity address
    that bring-up set (nor from a public address)."""
    w = scenario["w"]
    identity = next(e for _, e in w.lines if e.get("event") == "ready")["identityAddress"].upper()
    timeline = snoop.own_address_timeline(scenario["capture"])
    uses = [u for u in timeline if u[0] != "random"]
    kinds = {u[0] for u in uses}
    print(f"\n{scenario['kind']}: identity {identity}; {len(uses)} uses: "
          f"{ {k: sum(1 for u in uses if u[0] == k) for k in sorted(kinds)} }; first {timeline[:4]}")
    assert kinds == {"advertising", "active scan", "initiating"}, kinds
    bad = [u for u in uses if u[1] != 0x01 or u[2] is None or u[2] == identity or int(u[2][:2], 16) >> 6 != 0b01]
    assert not bad, bad
