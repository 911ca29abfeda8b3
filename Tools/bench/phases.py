"""Where a wearable's first reads spend their time, from its own capture (`--btsnoop`).

usage: python phases.py CAPTURE [CAPTURE ...]

For each peer address the wearable read (a link of ours as central on which a Read Request was
answered), the first read's time split into four phases, each from the host's own H4 records:
  heard    first advertising report of that address -> our LE Create Connection to it: the wait of
           the scheduler (one connection attempt at a time, the crossing-connection rule, back-off);
  connect  LE Create Connection -> LE Connection Complete: the peer's next connectable advert, and
           attempts that failed (counted);
  discover LE Connection Complete -> our first read of the payload: MTU exchange and any discovery
           (requests counted);
  read     that request (a Read Request, or a Read By Type of the 128-bit payload UUID) -> the last
           response of the payload (Read, Read By Type or Read Blob Response).
Addresses are the peer's as advertised and connected (a resolvable private one changes per period:
each is a peer of its own here).

Then, over all captures, how the attempts went (`attempts`): LE Create Connection sent, attempts we
cancelled at our own timeout (LE Create Connection Cancel), links as central that ended 0x3E (Connection
Failed to be Established: a CONNECT_IND the advertiser did not take, mostly another central's won), the
most attempts one peer took, and how many first reads went over a link the peer made to us.
"""
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tests" / "Interop"))
import snoop  # noqa: E402


def address(octets):
    return ":".join(f"{b:02X}" for b in octets[::-1])


def first_reads(path):
    """{peer: dict(heard, create, attempts, up, round_trips, read, done)} for each peer read as central."""
    heard, creates, peers, links, out = {}, {}, {}, {}, {}
    for t, octets, _ in snoop.advertising_reports(path):
        heard.setdefault(address(octets), t)
    for received, t, p in snoop.records(path):
        if not received and len(p) >= 14 and p[0] == 0x01 and (p[1] | p[2] << 8) == 0x200D:
            peer = address(p[10:16])
            c = creates.setdefault(peer, [t, 0])
            c[1] += 1
        elif received and len(p) >= 15 and p[0] == 0x04 and p[1] == 0x3E and p[3] in (0x01, 0x0A) and p[4] == 0 and p[7] == 0:
            handle, peer = (p[5] | p[6] << 8) & 0x0FFF, address(p[9:15])
            if peer not in out and peer in creates:
                links[handle] = peer
                peers[peer] = dict(up=t, sent=0, read=None, done=None)
        elif len(p) >= 10 and p[0] == 0x02:
            handle = (p[1] | p[2] << 8) & 0x0FFF
            peer = links.get(handle)
            if peer is None or (p[7] | p[8] << 8) != 0x0004 or (p[2] >> 4) & 0x3 == 0x1:
                continue
            s = peers[peer]
            if not received:
                s["sent"] += 1
                by_uuid = p[9] == 0x08 and (p[5] | p[6] << 8) == 21  # Read By Type of a 128-bit UUID
                if (p[9] == 0x0A or by_uuid) and s["read"] is None:
                    s["read"] = t
            elif s["read"] is not None and p[9] in (0x0B, 0x0D) or (s["read"] is not None and s["done"] is None and p[9] == 0x09):
                s["done"] = t
        elif received and len(p) >= 7 and p[0] == 0x04 and p[1] == 0x05 and p[3] == 0x00:
            peer = links.pop(p[4] | p[5] << 8, None)
            if peer and peers[peer]["done"] is not None and peer in heard:
                s = peers.pop(peer)
                out[peer] = dict(heard=heard[peer], create=creates[peer][0], attempts=creates[peer][1], up=s["up"],
                                 round_trips=s["sent"], read=s["read"], done=s["done"])
            elif peer:
                peers.pop(peer)
    return out


def attempts(path):
    """What became of one wearable's connection attempts, from its capture (see the module's doc)."""
    out = dict(creates=0, cancels=0, central_links=0, ended_3e=0, failed_complete=0, inbound_reads=set(), most={})
    central, inbound = {}, {}
    for received, _t, p in snoop.records(path):
        if not received and len(p) >= 4 and p[0] == 0x01:
            opcode = p[1] | p[2] << 8
            if opcode == 0x200D and len(p) >= 16:
                out["creates"] += 1
                peer = address(p[10:16])
                out["most"][peer] = out["most"].get(peer, 0) + 1
            elif opcode == 0x200E:
                out["cancels"] += 1
        elif received and len(p) >= 15 and p[0] == 0x04 and p[1] == 0x3E and p[3] in (0x01, 0x0A):
            handle, peer = (p[5] | p[6] << 8) & 0x0FFF, address(p[9:15])
            if p[4] == 0x3E:
                out["failed_complete"] += 1
            elif p[4] == 0 and p[7] == 0:
                out["central_links"] += 1
                central[handle] = peer
            elif p[4] == 0 and p[7] == 1:
                inbound[handle] = peer
        elif received and len(p) >= 7 and p[0] == 0x04 and p[1] == 0x05 and p[3] == 0x00:
            handle = p[4] | p[5] << 8
            if central.pop(handle, None) is not None and p[6] == 0x3E:
                out["ended_3e"] += 1
            inbound.pop(handle, None)
        elif not received and len(p) >= 10 and p[0] == 0x02:
            handle = (p[1] | p[2] << 8) & 0x0FFF
            by_uuid = p[9] == 0x08 and (p[5] | p[6] << 8) == 21
            if handle in inbound and (p[9] == 0x0A or by_uuid):
                out["inbound_reads"].add(inbound[handle])
    return out


def print_attempts(paths):
    runs = [attempts(p) for p in paths]
    creates = sum(r["creates"] for r in runs)
    links = sum(r["central_links"] for r in runs)
    ended = sum(r["ended_3e"] + r["failed_complete"] for r in runs)
    per_peer = [n for r in runs for n in r["most"].values()]
    most = max(per_peer, default=0)
    over = sum(1 for n in per_peer if n > 3)
    inbound = sum(len(r["inbound_reads"]) for r in runs)
    print(f"  attempts: {creates} LE Create Connection, {sum(r['cancels'] for r in runs)} cancelled at our timeout, "
          f"{ended} of {links} links as central ended 0x3E; most attempts on one peer address {most}, "
          f"{over} peer address(es) needing more than 3; {inbound} peer(s) read over a link they made")
    return dict(creates=creates, cancels=sum(r["cancels"] for r in runs), ended3E=ended, centralLinks=links,
                mostAttempts=most, overThree=over, inboundReads=inbound)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rows = []
    for path in sys.argv[1:]:
        for peer, r in sorted(first_reads(path).items(), key=lambda kv: kv[1]["heard"]):
            row = (r["create"] - r["heard"], r["up"] - r["create"], r["read"] - r["up"], r["done"] - r["read"])
            rows.append(row)
            print(f"  {Path(path).stem} <- {peer}: heard {row[0]:.2f} s, connect {row[1]:.2f} s "
                  f"({r['attempts']} attempt{'s' if r['attempts'] != 1 else ''}), discover {row[2]:.2f} s "
                  f"({r['round_trips']} ATT requests on the link), read {row[3]:.2f} s; in all {sum(row):.2f} s")
    if rows:
        print("  median per phase over " + f"{len(rows)} first reads: " + ", ".join(
            f"{name} {statistics.median(r[i] for r in rows):.2f} s" for i, name in enumerate(("heard", "connect", "discover", "read"))))
    return print_attempts(sys.argv[1:])


if __name__ == "__main__":
    main()
