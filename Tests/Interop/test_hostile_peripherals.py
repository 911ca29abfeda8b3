"""A `herald wearable` reading peripherals that accept its connection and then break the read, beside a
Herald phone whose reading must go on.

One scenario per controller kind (module fixture, ~85 s each): wearable W, a Herald phone P1, a
peripheral S that lets discovery through and never answers the payload read, and one G that answers
it with garbage (a Write Response where a Read Response belongs). Both advertise again after every
link. W's central must give up on each within its own bound (the 30 s ATT transaction timeout, Core
5.4 Vol 3 Part F 3.3.3; at once for a wrong response), back off (5 failures, then 1 minute, see
README "Where we differ from the reference apps"), and keep reading P1.
"""
import signal
import sys
import time
from pathlib import Path

import pytest

from radio import open_radio
from test_wearable import ANDROID_PAYLOAD, Lines, phone, stop, target_of_payload, wearable, windows_with_readings

PEERS = Path(__file__).parent / "peers"
pytestmark = pytest.mark.timeout(240)

RUN = 80.0
MAXIMUM_FAILURES = 5  # HeraldCentralConfiguration.maximumFailures


@pytest.fixture(scope="module", params=["bumble", "zephyr"])
def scenario(request, herald_bin, tmp_path_factory):
    kind = request.param
    logs = tmp_path_factory.mktemp(f"hostile-peripherals-{kind}")
    radio = open_radio(kind, 4)
    procs = []
    try:
        w = wearable(herald_bin, radio.paths[0], logs / "w", "--btsnoop", str(logs / "w.btsnoop"), "--stats")
        procs.append(w)
        p1, t_p1 = phone(radio.paths[1], "C1:00:00:00:00:01", "android", ANDROID_PAYLOAD)
        procs.append(p1)
        silent = Lines([sys.executable, str(PEERS / "silent_payload_server.py"), f"serial:{radio.paths[2]}",
                        "C5:00:00:00:00:05", "restart"])
        garbage = Lines([sys.executable, str(PEERS / "garbage_payload_server.py"), f"serial:{radio.paths[3]}",
                         "C6:00:00:00:00:06"])
        procs += [silent, garbage]
        for p in (silent, garbage):
            p.wait_for(lambda l: l.startswith("advertising"), timeout=60)
        start = time.monotonic()
        time.sleep(RUN)
        end = time.monotonic()
        stop(w.proc, signal.SIGINT)
        for p in procs:
            stop(p.proc)
        radio.close()
        procs, radio = [], None
        yield dict(kind=kind, w=w, p1=p1, t_p1=t_p1, silent=silent, garbage=garbage, start=start, end=end)
    finally:
        for p in procs:
            stop(p.proc)
        if radio:
            radio.close()


def times(p, word):
    return [t for t, l in p.lines if l.startswith(word)]


def test_phone_read_in_every_window_beside_broken_peripherals(scenario):
    w = scenario["w"]
    counts = windows_with_readings(w, target_of_payload(w, ANDROID_PAYLOAD), scenario["start"], scenario["end"])
    print(f"\n{scenario['kind']}: P1 readings per 30 s window {counts}")
    assert counts and all(c >= 1 for c in counts), counts


def test_silent_read_given_up_at_the_att_timeout(scenario):
    """Each read S ignored ended with W closing the link 30 s later (the ATT transaction timeout),
    not sooner, not much later; W came back no more than `maximumFailures` times."""
    s = scenario["silent"]
    reads, gone, connects = times(s, "read ignored"), times(s, "disconnected"), times(s, "connected")
    print(f"\n{scenario['kind']}: S: {len(connects)} links, reads ignored at "
          f"{[round(t - scenario['start'], 1) for t in reads]}, links ended at {[round(t - scenario['start'], 1) for t in gone]}")
    assert reads, s.lines[-10:]
    for r in reads:
        after = [g for g in gone if g > r]
        if r + 36 > scenario["end"]:
            continue  # the run ended before this read's timeout
        assert after and 29 <= after[0] - r <= 36, (r, gone)
    assert len(connects) <= MAXIMUM_FAILURES


def test_garbage_answer_given_up_at_once_then_backed_off(scenario):
    """Each garbled answer ends the link within a few seconds; after `maximumFailures` in a row W
    leaves G alone for the first back-off round (60 s)."""
    g = scenario["garbage"]
    reads, gone, connects = times(g, "read garbled"), times(g, "disconnected"), times(g, "connected")
    print(f"\n{scenario['kind']}: G: {len(connects)} links at {[round(t - scenario['start'], 1) for t in connects]}, "
          f"{len(reads)} garbled answers")
    assert reads, g.lines[-10:]
    for r in reads:
        after = [x for x in gone if x > r]
        assert after and after[0] - r <= 5, (r, gone)
    # Five in a row, then nothing for the first back-off round (60 s; the simulated radio's timing
    # allows a few seconds less), then the next round.
    assert len(connects) >= MAXIMUM_FAILURES, connects
    if len(connects) > MAXIMUM_FAILURES:
        pause = connects[MAXIMUM_FAILURES] - connects[MAXIMUM_FAILURES - 1]
        print(f"{scenario['kind']}: G left alone {pause:.1f} s after {MAXIMUM_FAILURES} failures")
        assert pause >= 55, connects
    w = scenario["w"]
    assert not any(e.get("event") == "didRead" and e.get("payload", "").startswith("1010") for _, e in w.lines), \
        "a garbled answer was taken as a payload"
