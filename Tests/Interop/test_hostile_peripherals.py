"""A `herald wearable` reading peripherals that accept its connection and then break the read, beside a
Herald phone whose reading must go on.

One scenario per controller kind (module fixture, ~85 s each): wearable W, a Herald phone P1, a
peripheral S that lets discovery through and never answers the payload read, and one G that answers
it with garbage (a Write Response where a Read Response belongs). Both advertise again after every
link. W's central must give up on each within its own bound (the 30 s ATT transaction timeout, Core
5.4 Vol 3 Part F 3.3.3; at once for a wrong response), back off (5 failures, then 1 minute, see
README "Where we differ from the reference apps"), and keep reading P1. On Zephyr 2.5's radio
(`zephyr25`) the Herald reference's C++ wearable (zephyr-bsim/apps) is a second benign peer, read
before the run begins and measured in every window.
"""
import signal
import sys
import time
from pathlib import Path

import pytest

import snoop
from test_hostile_centrals import open_radio_with_reference, reference_in
from test_reference_cpp import CPP_WEARABLE_PAYLOAD
from test_wearable import ANDROID_PAYLOAD, Lines, keep, phone, stop, target_of_payload, wearable, windows_with_readings

PEERS = Path(__file__).parent / "peers"
pytestmark = pytest.mark.timeout(240)

RUN = 80.0
MAXIMUM_FAILURES = 5  # HeraldSensorConfiguration.maximumFailures
MAXIMUM_FAILURES_TO_ESTABLISH = 10  # HeraldSensorConfiguration.maximumFailuresToEstablish
S_ADDRESS, G_ADDRESS = "C5:00:00:00:00:05", "C6:00:00:00:00:06"


@pytest.fixture(scope="module", params=["bumble", "zephyr", "zephyr25"])
def scenario(request, herald_bin, tmp_path_factory):
    kind = request.param
    logs = tmp_path_factory.mktemp(f"hostile-peripherals-{kind}")
    radio = open_radio_with_reference(kind, 4)
    procs = []
    try:
        w = wearable(herald_bin, radio.paths[0], logs / "w", "--btsnoop", str(logs / "w.btsnoop"), "--stats")
        procs.append(w)
        p1, t_p1 = phone(radio.paths[1], "C1:00:00:00:00:01", "android", ANDROID_PAYLOAD)
        procs.append(p1)
        silent = Lines([sys.executable, str(PEERS / "silent_payload_server.py"), f"serial:{radio.paths[2]}",
                        S_ADDRESS, "restart"])
        garbage = Lines([sys.executable, str(PEERS / "garbage_payload_server.py"), f"serial:{radio.paths[3]}",
                         G_ADDRESS])
        procs += [silent, garbage]
        for p in (silent, garbage):
            p.wait_for(lambda l: l.startswith("advertising"), timeout=60)
        reference = None
        if kind == "zephyr25":
            # The reference advertises from ~16 s of simulated time after boot: W reads it before the run.
            w.wait_for(lambda e: e.get("event") == "didRead" and e.get("payload") == CPP_WEARABLE_PAYLOAD, timeout=120)
            reference = radio.app_log(0)
        start = time.monotonic()
        time.sleep(RUN)
        end, end_unix = time.monotonic(), time.time()
        stop(w.proc, signal.SIGINT)
        for p in procs:
            stop(p.proc)
        radio.close()
        # Each peer's own lines and the radio's logs beside W's capture (docs/ci-flakes.md).
        keep(logs, w=w, p1=p1, silent=silent, garbage=garbage)
        radio.keep_logs(logs / "radio")
        procs, radio = [], None
        yield dict(kind=kind, w=w, p1=p1, t_p1=t_p1, silent=silent, garbage=garbage, start=start, end=end,
                   reference=reference, capture=logs / "w.btsnoop", end_unix=end_unix)
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


def test_reference_wearable_measured_in_every_window_beside_broken_peripherals(scenario):
    reference_in(scenario)
    w = scenario["w"]
    counts = windows_with_readings(w, target_of_payload(w, CPP_WEARABLE_PAYLOAD), scenario["start"], scenario["end"])
    print(f"\n{scenario['kind']}: reference wearable readings per 30 s window {counts}")
    assert counts and all(c >= 1 for c in counts), counts


def links_to(scenario, address):
    """W's links as central to `address`, from W's own capture (S and G log every central's links, and
    on Zephyr 2.5's radio the reference wearable reads them too), and how long after W's Read Request
    W asked to end each one (None for one the run's end closed)."""
    out = []
    for l in snoop.links(scenario["capture"]):
        if l.role == "central" and l.peer == address:
            closed = l.asked or l.down
            ended_by_w = l.read_sent and closed and snoop.unix_seconds(closed) < scenario["end_unix"]
            out.append((l, round(closed - l.read_sent, 1) if ended_by_w else None))
    return out


def round_starter(links):
    """The position of the failed link that starts W's first back-off round: the `maximumFailures`th
    in a row, or the `maximumFailuresToEstablish`th when it is one that failed to be established
    (0x3E); None if the run never got there."""
    for i, (link, _) in enumerate(links):
        if i + 1 >= (MAXIMUM_FAILURES_TO_ESTABLISH if link.reason == 0x3E else MAXIMUM_FAILURES):
            return i
    return None


def test_silent_read_given_up_at_the_att_timeout(scenario):
    """Each read S ignored ended with W asking to close the link 30 s later (the ATT transaction
    timeout), not sooner, not much later; W came back no more than `maximumFailures` times."""
    assert times(scenario["silent"], "read ignored"), scenario["silent"].lines[-10:]
    links = links_to(scenario, S_ADDRESS)
    waits = [w for _, w in links if w is not None]
    print(f"\n{scenario['kind']}: S: {len(links)} links; W's read to W's close {waits} s")
    assert waits, links
    assert all(29 <= w <= 36 for w in waits), waits
    assert len(links) <= MAXIMUM_FAILURES


def test_garbage_answer_given_up_at_once_then_backed_off(scenario):
    """Each garbled answer ends the link within a few seconds; after `maximumFailures` in a row W
    leaves G alone for the first back-off round (60 s)."""
    assert times(scenario["garbage"], "read garbled"), scenario["garbage"].lines[-10:]
    links = links_to(scenario, G_ADDRESS)
    connects = [l.up for l, _ in links]
    waits = [w for _, w in links if w is not None]
    print(f"\n{scenario['kind']}: G: {len(links)} links at {[round(t - connects[0], 1) for t in connects]}; "
          f"W's read to W's close {waits} s")
    assert waits and all(w <= 5 for w in waits), waits
    # Five in a row, then nothing for the first back-off round (60 s; the simulated radio's timing
    # allows a few seconds less), then the next round.
    last = round_starter(links)
    assert last is not None, [(round(l.up - connects[0], 1), l.reason) for l, _ in links]
    if len(connects) > last + 1:
        pause = connects[last + 1] - connects[last]
        print(f"{scenario['kind']}: G left alone {pause:.1f} s after {last + 1} failures")
        assert pause >= 55, connects
    w = scenario["w"]
    assert not any(e.get("event") == "didRead" and e.get("payload", "").startswith("1010") for _, e in w.lines), \
        "a garbled answer was taken as a payload"
