"""Why a crowd's central links ended 0x3E, from both ends: each failed link matched with its target's capture.

usage: python failed_links.py WORK_DIR [WORK_DIR ...]   (a `bench-wearables` work folder: w*.btsnoop, b*.btsnoop)

A link as central that ended 0x3E (Connection Failed to be Established, Core 5.4 Vol 6 Part B 4.5.2:
the peripheral never answered in the first six connection events) is looked up in the capture of the
wearable or beacon whose address it targeted (its LE Set Random Address commands say which addresses
were its), for a link as peripheral that came up within 150 ms of ours:
  collision     another central's link came up there instead: it won the advert;
  both failed   our link came up there too and failed on that side as well: both controllers missed
                the first events (a scheduling conflict, not a lost race);
  not received  nothing came up there: the target's controller did not take the CONNECT_IND.
Targets without a capture (the phone) are counted apart.

Each failure is also told "raced" when another wearable's link as central to the same address came up
within RACE s of ours: both answered one advert (CONNECT_INDs a few ms apart follow the same ADV_IND;
the targets advertise every 100-250 ms). A "not received" that raced is two CONNECT_INDs on air at
once, one that did not is the target's controller busy elsewhere.
"""
import glob
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tests" / "Interop"))
import snoop  # noqa: E402


RACE = 0.02


def classify(work):
    targets = sorted(glob.glob(os.path.join(work, "[wb]*.btsnoop")))
    captures = [c for c in targets if os.path.basename(c).startswith("w")]
    links = {c: snoop.links(c) for c in targets}
    owner = {}
    for c in targets:
        for entry in snoop.own_address_timeline(c):
            if entry[0] == "random":
                owner[entry[1]] = c
    counts = {"collision": 0, "both failed": 0, "not received": 0, "no capture of the target": 0}
    raced = {k: 0 for k in counts}
    for c in captures:
        ours = {a for a, o in owner.items() if o == c}
        for link in links[c]:
            if link.role != "central" or link.reason != 0x3E:
                continue
            rivals = [m for o in captures if o != c for m in links[o]
                      if m.role == "central" and m.peer == link.peer and abs(m.up - link.up) < RACE]
            target = owner.get(link.peer)
            if target is None:
                kind = "no capture of the target"
            else:
                near = [m for m in links[target] if m.role == "peripheral" and abs(m.up - link.up) < 0.15]
                kind = "both failed" if any(m.peer in ours for m in near) else "collision" if near else "not received"
            counts[kind] += 1
            raced[kind] += bool(rivals)
    return {k: f"{v} ({raced[k]} raced)" for k, v in counts.items()}


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for work in sys.argv[1:]:
        print(os.path.basename(work.rstrip("/")), classify(work))
