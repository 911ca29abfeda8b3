"""How long a wearable's connection attempts wait for their link, from its own capture (`--btsnoop`).

usage: python attempt_waits.py CAPTURE [CAPTURE ...]

For each LE Create Connection that ended in a link (LE Connection Complete, success): how long before
it the target's last advert was heard (the phase) and how long the attempt waited for its link. The
initiator waits for the target's next connectable advert (Core 5.4 Vol 6 Part B 4.5.1), so an attempt
started just after an advert waits about one advertising interval (a Herald device's 200 ms plus
advDelay), and the controller makes one attempt at a time. Prints the quantiles of both and the
median wait by phase (docs/crowd-issue-39.md, "Which due device first").
"""
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tests" / "Interop"))
import snoop  # noqa: E402


def attempt_waits(path):
    """[(phase, wait)] in seconds for each attempt of the capture at `path` that ended in a link."""
    adverts, out, pending = {}, [], None
    for t, octets, _ in snoop.advertising_reports(path):
        adverts.setdefault(bytes(octets), []).append(t)
    for received, t, p in snoop.records(path):
        if not received and len(p) >= 16 and p[0] == 0x01 and (p[1] | p[2] << 8) == 0x200D:
            heard = [a for a in adverts.get(bytes(p[10:16]), []) if a <= t]
            pending = (bytes(p[10:16]), t, t - heard[-1] if heard else None)
        elif received and pending and len(p) >= 15 and p[0] == 0x04 and p[1] == 0x3E and p[3] in (0x01, 0x0A):
            target, started, phase = pending
            # A link a central made to us meanwhile (role 1) is not the attempt's; a failure ends it.
            if p[4] != 0:
                pending = None
            elif p[7] == 0x00 and bytes(p[9:15]) == target:
                pending = None
                if phase is not None:
                    out.append((phase, t - started))
    return out


def quantiles(values):
    values = sorted(values)
    return " ".join(f"{values[min(int(len(values) * f), len(values) - 1)] * 1000:.0f}" for f in (0.1, 0.25, 0.5, 0.75, 0.9))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    missing = [a for a in sys.argv[1:] if not Path(a).is_file()]
    if missing:
        sys.exit(f"attempt_waits.py: no capture at {', '.join(missing)}")
    rows = [r for path in sys.argv[1:] for r in attempt_waits(path)]
    if not rows:
        sys.exit("attempt_waits.py: no attempt ended in a link in these captures")
    print(f"{len(rows)} attempts that ended in a link (ms, 10th/25th/50th/75th/90th percentile)")
    print(f"  since the target's last advert: {quantiles([p for p, _ in rows])}")
    print(f"  waiting for the link:           {quantiles([w for _, w in rows])}")
    for low in range(0, 450, 50):
        waits = [w for p, w in rows if low <= p * 1000 < low + 50 or (low == 400 and p * 1000 >= 400)]
        if waits:
            print(f"  started {low}-{low + 49 if low < 400 else '...'} ms after its advert: {len(waits)}, "
                  f"median wait {statistics.median(waits) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
