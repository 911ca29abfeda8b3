"""Which first reads waited out the crossing-connection hold, and why, from one `Tools/bench-wearables`
run (its printed log, which names its work directory).

usage: python holds.py BENCH_LOG [BENCH_LOG ...]

Of two wearables that advertise resolvable private addresses, one waits `crossingHold` (1.5 s) for the
other to connect (`HeraldCentral+Rotation.swift`: a coin per pair, the same from both sides, mirrored
in `waits` below). For each wearable's first read over its own link (the bench's phases) this sorts the
peer as `static` (the beacon or the phone: never held), `connector` (we connect) or `waiter` (we wait),
and for every waiter whose heard phase was 1.4 s or more, says when the connector read the waiter and
over whose link: `inbound` means the connector never connected within the hold and read the waiter
over the link the waiter made after it.
"""
import json
import re
import sys
from collections import Counter
from pathlib import Path

from pace import is_resolvable_private

PHASE = re.compile(r"w(\d) <- ([0-9A-F:]{17}): heard ([0-9.]+) s, connect ([0-9.]+) s \((\d+) attempt")
PAIR = re.compile(r"wearable (\d): wearable (\d): first advert -> didRead ([0-9.]+) s")


def hci(address: str) -> list[int]:
    """The address's six octets in HCI order (least significant first), as `BDAddress.bytes`."""
    return [int(x, 16) for x in reversed(address.split(":"))]


def is_larger(a: str, b: str) -> bool:
    return hci(a)[::-1] > hci(b)[::-1]


def pair_coin(a: str, b: str) -> bool:
    x = [p ^ q for p, q in zip(hci(a), hci(b))]
    folded = (x[0] | x[1] << 8 | x[2] << 16 | x[3] << 24) ^ (x[4] | x[5] << 8)
    return (folded * 0x9E3779B9) & 0x8000_0000 != 0


def waits(own: str, peer: str) -> bool:
    """Whether the device advertising `own` waits for the one advertising `peer`."""
    return is_larger(own, peer) != pair_coin(own, peer)


def own_addresses(work: Path) -> dict[int, str]:
    """Each wearable's first advertised address, from its JSON event log."""
    own = {}
    for log in work.glob("w*.jsonl"):
        for line in log.open():
            if '"event":"address"' in line:
                own[int(log.stem[1:])] = json.loads(line)["address"]
                break
    return own


def analyse(text: str, own: dict[int, str]) -> tuple[Counter, Counter, list[str]]:
    index = {a: i for i, a in own.items()}
    pairs = {(int(m[1]), int(m[2])): float(m[3]) for m in PAIR.finditer(text)}
    phases = {(int(m[1]), m[2]): float(m[3]) for m in PHASE.finditer(text)}
    roles, held, lines = Counter(), Counter(), []
    for (i, peer), heard in phases.items():
        if not is_resolvable_private(bytes(hci(peer))) or peer not in index:
            role = "static"
        else:
            role = "waiter" if waits(own[i], peer) else "connector"
        roles[role] += 1
        if heard < 1.4:
            continue
        held[role] += 1
        if role == "waiter":
            j = index[peer]
            via = "own link" if (j, own[i]) in phases else "inbound"
            lines.append(f"w{i} waited {heard:.2f} s for w{j}; w{j} read w{i} at {pairs.get((j, i))} s over {via}")
    return roles, held, lines


def main(paths: list[str]) -> None:
    for path in paths:
        text = Path(path).read_text()
        work = Path(re.search(r'"work": "([^"]*)"', text)[1])
        roles, held, lines = analyse(text, own_addresses(work))
        print(f"{path}: first reads over our own link by role {dict(roles)}; heard 1.4 s or more {dict(held)}")
        for line in lines:
            print("  " + line)


if __name__ == "__main__":
    main(sys.argv[1:])
