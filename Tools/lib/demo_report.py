"""Tools/demo's eyes: follows the roles' JSON event files while they run, says in plain words who read
whom, and afterwards checks what the demo claims. Run by Tools/demo; not a test module.

Identity, not counts: each wearable's secret key is made by the demo, so the demo knows every Simple
payload the wearable can serve during the run (`herald keys derive`, one per payload period: the demo
shortens the period so a run spans several); the venue beacon's payload is fixed by its options. A read
counts for a pair only when its bytes are one of those, and each wearable must have read the other's
payload of every period the run spent at least 10 s in (`<role>.payloads`: one line per period, the
payload and the seconds of that period in the run).

    demo_report.py watch WORKDIR SECONDS   live lines until the roles exit or SECONDS pass
    demo_report.py check WORKDIR           the claims; exit 1 when one does not hold
"""

import json
import os
import sys
import time

NAMES = {"wearable-a": "wearable A", "wearable-b": "wearable B", "beacon": "the venue beacon"}
READERS = ["wearable-a", "wearable-b"]


# A period the run spent less time in may have ended before the wearables found each other.
MINIMUM_PERIOD_SECONDS = 10


def payload_lines(work, role):
    """[(payload hex, seconds of its period in the run or None)] from the file Tools/demo wrote."""
    path = os.path.join(work, f"{role}.payloads")
    out = []
    if os.path.exists(path):
        for line in open(path):
            words = line.split()
            if words:
                out.append((words[0].lower(), int(words[1]) if len(words) > 1 else None))
    return out


def expected_payloads(work):
    """payload hex -> role, from the files Tools/demo wrote (one payload per line)."""
    return {payload: role for role in NAMES for payload, _ in payload_lines(work, role)}


def events(path, start=0):
    """(events, next offset): whole JSON lines from byte `start`; a half-written last line waits."""
    try:
        with open(path, "rb") as f:
            f.seek(start)
            data = f.read()
    except FileNotFoundError:
        return [], start
    end = data.rfind(b"\n") + 1
    out = []
    for line in data[:end].splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out, start + end


def who(payload, known):
    return known.get(payload.lower(), "unknown")


def watch(work, seconds):
    known = expected_payloads(work)
    offsets = {r: 0 for r in READERS}
    said = set()
    started = time.monotonic()
    pidfile = os.path.join(work, "roles.pids")
    pids = [int(p) for p in open(pidfile).read().split()] if os.path.exists(pidfile) else []

    def say(text):
        print(f"  +{int(time.monotonic() - started):3d}s  {text}", flush=True)

    while time.monotonic() - started < seconds:
        for reader in READERS:
            new, offsets[reader] = events(os.path.join(work, f"{reader}.events"), offsets[reader])
            for e in new:
                kind = e.get("event")
                if kind == "ready" and (reader, "ready") not in said:
                    said.add((reader, "ready"))
                    say(f"{NAMES[reader]} is up (address {e.get('identityAddress')}, payload {e.get('payload')})")
                elif kind == "ownPayload":
                    say(f"{NAMES[reader]} starts a new payload period: payload {e.get('payload')}, a new address")
                elif kind == "didDetect" and (reader, "detect") not in said:
                    said.add((reader, "detect"))
                    say(f"{NAMES[reader]} hears its first Herald advert (device {e.get('target')})")
                elif kind == "didRead":
                    source = who(e.get("payload", ""), known)
                    # Each of a wearable's payloads (one per period) once; anyone else's once.
                    key = (reader, e.get("payload", "").lower() if source in READERS else source)
                    if key in said:
                        continue
                    said.add(key)
                    name = NAMES.get(source, "an unknown device")
                    say(f"{NAMES[reader]} read {name}'s payload ({e.get('shortName')}, device {e.get('target')})")
        if pids and not any(alive(p) for p in pids):
            break
        time.sleep(0.5)


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def check(work):
    known = expected_payloads(work)
    failures = []
    print("== what the demo claims, checked ==")
    for reader in READERS:
        evs, _ = events(os.path.join(work, f"{reader}.events"))
        reads = {}
        for e in evs:
            if e.get("event") == "didRead":
                source = who(e.get("payload", ""), known)
                reads[source] = reads.get(source, 0) + 1
        for source in [r for r in ["wearable-a", "wearable-b", "beacon"] if r != reader]:
            n = reads.get(source, 0)
            ok = n > 0
            times = f"{n} time{'s' if n != 1 else ''}" if ok else "never"
            print(f"  {'ok  ' if ok else 'FAIL'}  {NAMES[reader]} read {NAMES[source]}'s payload: {times}")
            if not ok:
                failures.append(f"{NAMES[reader]} never read {NAMES[source]}'s payload")
        for source in [r for r in READERS if r != reader]:
            periods = [p for p, seconds in payload_lines(work, source) if seconds is None or seconds >= MINIMUM_PERIOD_SECONDS]
            read = {e.get("payload", "").lower() for e in evs if e.get("event") == "didRead"}
            missed = [p for p in periods if p not in read]
            if len(periods) > 1 or missed:
                ok = not missed
                print(f"  {'ok  ' if ok else 'FAIL'}  {NAMES[reader]} read {NAMES[source]}'s payload of "
                      f"{len(periods) - len(missed)} of {len(periods)} payload periods")
                if not ok:
                    failures.append(f"{NAMES[reader]} never read {NAMES[source]}'s payload {', '.join(missed)}")
        if reads.get("unknown"):
            print(f"  note  {NAMES[reader]} read {reads['unknown']} payload(s) from no device of the demo")
    analyse = os.path.join(work, "analyse.txt")
    continuity = None
    if os.path.exists(analyse):
        for line in open(analyse):
            # "Continuity  4/4 windows = 100.00%"
            if line.startswith("Continuity") and "=" in line:
                try:
                    continuity = float(line.split("=")[1].strip().rstrip("%"))
                except ValueError:
                    pass
    if continuity is None:
        print("  FAIL  herald analyse gave no continuity figure (see analyse.txt)")
        failures.append("no continuity figure from herald analyse")
    else:
        ok = continuity >= 99.0
        print(f"  {'ok  ' if ok else 'FAIL'}  continuity (each wearable heard the other in every 30 s window): "
              f"{continuity:.2f}% (99% needed)")
        if not ok:
            failures.append(f"continuity {continuity:.2f}% is below 99%")
    with open(os.path.join(work, "result.txt"), "w") as f:
        f.write("PASS\n" if not failures else "FAIL: " + "; ".join(failures) + "\n")
    return 0 if not failures else 1


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "watch":
        watch(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 120)
    elif len(sys.argv) == 3 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
