"""How fast a simulated radio ran against the wall clock, read from the captures of the devices on it.

BabbleSim's handbrake keeps a simulation from running ahead of real time, but nothing keeps it from
falling behind: on a small machine, eight Zephyr controllers polling their ptys every 500 µs ran at
0.68 x real time (docs/crowd-issue-39.md). The hosts' clocks are real, so every latency a benchmark
measures over such a radio is stretched by 1 / pace, and a crowd looks slower than it is.

The measure: an advertiser sends an advertising event every advInterval + advDelay, advDelay drawn
from 0-10 ms (Core 5.4 Vol 6 Part B 4.4.2.2.1), in simulated time. A scanner's host stamps each
report in real time. So the gaps between one advertiser's consecutive reports, in one scanner's
capture, cluster at (advInterval + 5 ms) / pace, and at multiples of it where adverts were missed.
The shortest cluster gives the pace.

usage: python pace.py INTERVAL_MS CAPTURE.btsnoop...
"""
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tests" / "Interop"))
import snoop  # noqa: E402

ADV_DELAY_MEAN = 0.005  # half of advDelay's 0-10 ms


def is_resolvable_private(address: bytes) -> bool:
    """Resolvable private address: the two most significant bits 0b01 (Core 5.4 Vol 6 Part B 1.3.2.2).
    `address` is in HCI order, least significant octet first."""
    return address[5] >> 6 == 0b01


def advert_gaps(path, keep=is_resolvable_private):
    """Gaps (seconds, the capture's clock) between consecutive ADV_IND reports of each address `keep`
    accepts, in one capture (`snoop.advertising_reports`; one report per event, as this project's hosts
    leave the controller's duplicate filter off)."""
    last, gaps = {}, []
    for t, address, is_adv_ind in snoop.advertising_reports(path):
        if not is_adv_ind:
            continue
        if not keep(address):
            continue
        if address in last:
            gaps.append(t - last[address])
        last[address] = t
    return gaps


def pace(gaps, interval_s):
    """Simulated seconds per real second, or None without enough gaps. Gaps under a quarter of the
    interval (one advertising event heard on two channels across a scan window's change) are not
    gaps between events; the shortest cluster is the gaps within 15 % of its 5th percentile."""
    gaps = sorted(g for g in gaps if g > interval_s / 4)
    if len(gaps) < 20:
        return None
    floor = gaps[len(gaps) // 20]
    base = statistics.median(g for g in gaps if g <= floor * 1.15)
    return (interval_s + ADV_DELAY_MEAN) / base


def pace_of_captures(paths, interval_ms, keep=is_resolvable_private):
    gaps = []
    for path in paths:
        gaps += advert_gaps(path, keep)
    return pace(gaps, interval_ms / 1000)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: python pace.py INTERVAL_MS CAPTURE.btsnoop...")
    try:
        interval_ms = float(sys.argv[1])
    except ValueError:
        sys.exit(f"pace.py: the advertising interval must be a number of milliseconds, not {sys.argv[1]!r}")
    try:
        measured = pace_of_captures(sys.argv[2:], interval_ms)
    except (OSError, ValueError) as error:  # a missing capture, or a file that is not btsnoop H4
        sys.exit(f"pace.py: {error}")
    print("not enough adverts to tell" if measured is None else f"simulation pace: {measured:.2f} x real time")
