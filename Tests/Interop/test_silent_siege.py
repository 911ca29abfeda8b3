"""Issue 36 item 13: the scenario in which a whole simulation was reported to end, as a test that runs.

Our wearable W on Zephyr's radio (2.5.0 and 3.0.99) with a Herald phone P1 it has read; then four
silent Bumble centrals that connect to W, say nothing and reconnect as soon as they are dropped
(`hostile_central.py silent`), for 50 s. Into that siege come the two moments at which the radio was
said to die: a central R that connects, exchanges ATT_MTU 247 and reads W's payload, every 3 s through
the siege (`reader --mtu 247`, as a phone's Herald app reads), and a second phone P2 that W
connects to, exchanging ATT_MTU as a central, and reads (15 s in).

The radio is watched throughout: if any simulation process ends by itself, `ZephyrRadio.ended()`
names it (the phy, controller i or the pacer) with its exit status or signal and the kernel's trap
line, and the test fails with that and `uptime`. Every peer's own lines, W's capture and counters, and
the radio's logs (each controller's, the phy's, the pacer's) are kept in the test's log directory.
What was run and measured: docs/ci-flakes.md.
"""
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import snoop
from radio import ZephyrRadio, wanted_kinds, zephyr_available
from test_hostile_centrals import P2_PAYLOAD, hostile, stats
from test_wearable import ANDROID_PAYLOAD, Lines, events, keep, phone, stop, wearable

PEERS = Path(__file__).parent / "peers"
pytestmark = pytest.mark.timeout(300)

SILENT = 4
SIEGE = 50.0
P2_FROM = 15.0
MTU = 247
# Longest the silent centrals' hosts may take to get their first link.
STARTUP = 60.0


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def watch(radio, seconds, seen):
    """Sleeps `seconds`, noting the first moment the simulation is found ended."""
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if "died" not in seen and radio.proc.poll() is not None:
            seen["died"] = time.monotonic()
            seen["why"] = radio.ended() or "the simulation script ended without naming a process"
            seen["uptime"] = uptime()
        time.sleep(0.25)


@pytest.fixture(scope="module", params=["zephyr", "zephyr25"])
def siege(request, herald_bin, tmp_path_factory):
    kind = request.param
    if kind not in wanted_kinds(("zephyr", "zephyr25")):
        pytest.skip(f"HERALD_CONTROLLERS leaves out {kind}")
    why = zephyr_available(kind)
    if why:
        pytest.skip(why)
    logs = tmp_path_factory.mktemp(f"siege-{kind}")
    # W, P1, P2, R, then the silent centrals.
    radio = ZephyrRadio(4 + SILENT, kind=kind)
    procs, peers, seen = [], {}, {}
    try:
        w = wearable(herald_bin, radio.paths[0], logs / "w", "--btsnoop", str(logs / "w.btsnoop"), "--stats")
        procs.append(w)
        peers["w"] = w
        p1, _ = phone(radio.paths[1], "C1:00:00:00:00:01", "android", ANDROID_PAYLOAD)
        procs.append(p1)
        peers["p1"] = p1
        w.wait_for(lambda e: e.get("event") == "didRead" and e.get("payload") == ANDROID_PAYLOAD, timeout=30)
        # The centrals' Bumble hosts take a while to start on a loaded machine (25 s at a load average
        # of 25, 40 s at 34): R and the silent centrals start together, the siege begins when the first
        # silent central is in, and they all run until it is over.
        silent = hostile(kind, "silent", SIEGE + STARTUP, radio.paths[4:4 + SILENT])
        reader = Lines([sys.executable, str(PEERS / "hostile_central.py"), "reader", str(SIEGE + STARTUP),
                        "--connect-timeout", "5", "--mtu", str(MTU), f"serial:{radio.paths[3]}"])
        procs += [silent, reader]
        peers.update(silent=silent, reader=reader)
        t_siege, _ = silent.wait_for(lambda l: l.startswith("connected"), timeout=STARTUP)
        watch(radio, P2_FROM, seen)
        p2, t_p2 = phone(radio.paths[2], "C2:00:00:00:00:02", "android", P2_PAYLOAD)
        procs.append(p2)
        peers["p2"] = p2
        watch(radio, max(0.0, t_siege + SIEGE + 5 - time.monotonic()), seen)
        end = time.monotonic()
        seen.setdefault("uptime", uptime())
        stop(w.proc, signal.SIGINT)
    except AssertionError as e:
        # A peer that never got going: say whether the radio was still there, and how loaded the machine was.
        raise AssertionError(f"{kind}: {radio.ended() or 'the radio runs'}; {uptime()}; logs in {logs}: {e}") from None
    finally:
        # Every peer's own lines and the radio's logs, whatever happened (the evidence for a failure).
        for p in procs:
            stop(p.proc)
        radio.close()
        keep(logs, **peers)
        radio.keep_logs(logs / "radio")
    print(f"\n{kind}: logs in {logs}; uptime at the end: {seen['uptime']}")
    yield dict(kind=kind, w=w, p2=p2, t_p2=t_p2, silent=silent, reader=reader, t_siege=t_siege, end=end,
               seen=seen, capture=logs / "w.btsnoop")


def lines_of(p, event):
    return [(t, l.split()) for t, l in p.lines if l.startswith(event + " ")]


def test_the_radio_lives_through_the_siege(siege):
    seen = siege["seen"]
    if "died" in seen:
        pytest.fail(f"{siege['kind']}: the simulation ended {seen['died'] - siege['t_siege']:.1f} s into the siege: "
                    f"{seen['why']} (uptime: {seen['uptime']})")


def test_silent_centrals_got_in(siege):
    """The siege happened: at least two silent centrals held a link to W (the two W admits)."""
    connected = len(lines_of(siege["silent"], "connected"))
    print(f"\n{siege['kind']}: silent centrals connected {connected} times; W {stats(siege['w'])}")
    assert connected >= 2, siege["silent"].lines[-5:]


def test_reader_exchanged_mtu_and_read_the_payload(siege):
    """R read W's payload after exchanging ATT_MTU, again and again during the siege: W answered
    its Exchange MTU Requests (W's capture) and R's reads returned W's Simple payload."""
    reads = [(t, words) for t, words in lines_of(siege["reader"], "read") if siege["t_siege"] <= t <= siege["end"]]
    # Exchange MTU Responses W sent (Core 5.4 Vol 3 Part F 3.4.2.2): ATT opcode 0x03 on the ATT
    # channel (CID 4) of an ACL packet from the host.
    responses = [p for received, p in snoop.packets(siege["capture"])
                 if not received and len(p) >= 10 and p[0] == 0x02 and p[7] | p[8] << 8 == 4 and p[9] == 0x03]
    print(f"\n{siege['kind']}: R read W {len(reads)} times; W answered {len(responses)} Exchange MTU Requests; "
          f"R failed {[w[3:] for _, w in lines_of(siege['reader'], 'failed')]}")
    assert len(reads) >= 2, (siege["reader"].lines[-8:], siege["reader"].stderr[-1500:])
    assert all(words[3].startswith("10") for _, words in reads)
    assert len(responses) >= len(reads), len(responses)


def test_phone_arriving_during_the_siege_is_read(siege):
    """W connected to P2 as a central (its own MTU exchange) and read it within 15 s."""
    reads = [t for t, e in events(siege["w"], "didRead") if e.get("payload") == P2_PAYLOAD]
    assert reads, [e.get("payload") for _, e in events(siege["w"], "didRead")]
    delay = min(reads) - siege["t_p2"]
    print(f"\n{siege['kind']}: P2 advertising to didRead {delay:.2f} s")
    assert delay <= 15, delay


def test_wearable_ended_cleanly(siege):
    w = siege["w"]
    assert w.proc.returncode == 0, w.stderr[-2000:]
    s = stats(w)
    assert s["connections"] == 0 and s["creditsInFlight"] == 0 and s["aclQueued"] == 0, s
