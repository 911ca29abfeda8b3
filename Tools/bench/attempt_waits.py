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
    """[(phase, wait)] in seconds for each attempt of the capture at `path` that ended in a link: the
    link as central to the attempt's address (`snoop.links`) that came up before our next attempt."""
    adverts, creates = {}, []
    for t, octets, _ in snoop.advertising_reports(path):
        adverts.setdefault(address(octets), []).append(t)
    for received, t, p in snoop.records(path):
        if not received and len(p) >= 16 and p[0] == 0x01 and (p[1] | p[2] << 8) == 0x200D:
            creates.append((t, address(p[10:16])))
    ups = [(link.up, link.peer) for link in snoop.links(path) if link.role == "central"]
    out = []
    for i, (started, target) in enumerate(creates):
        until = creates[i + 1][0] if i + 1 < len(creates) else float("inf")
        up = next((t for t, peer in ups if peer == target and started <= t < until), None)
        heard = [a for a in adverts.get(target, []) if a <= started]
        if up is not None and heard:
            out.append((started - heard[-1], up - started))
    return out


def address(octets):
    """An address in HCI order (least significant octet first) as `snoop.links` writes it."""
    return ":".join(f"{b:02X}" for b in bytes(octets)[::-1])


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
