"""Wearables and phones on one radio: how soon each reads the others, and how often it measures them.

usage: python wearables.py HERALD_BIN [--controller bumble|zephyr|zephyr25] [--wearables N] [--phones N] [--seconds S]

Starts N `herald wearable`s (each with its own Simple payload) and N Bumble "Android phones"
(Tests/Interop/peers/herald_phone.py) on one radio of the chosen controllers, runs them for S
seconds, and prints, for every wearable and every peer it should find:
  - first advert -> didRead: from the wearable's didDetect of that peer to its didRead (seconds);
  - RSSI readings (didMeasure) of that peer in each full 30 s window after the read.
Exit status 1 when some wearable did not read some peer.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "Interop"))
from radio import DESCRIPTIONS, KINDS, open_radio  # noqa: E402


def seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def main():
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    p = argparse.ArgumentParser()
    p.add_argument("herald")
    p.add_argument("--controller", choices=KINDS, default="zephyr")
    p.add_argument("--wearables", type=int, default=3)
    p.add_argument("--phones", type=int, default=1)
    p.add_argument("--seconds", type=float, default=95)
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-wearables-"))
    radio = open_radio(args.controller, args.wearables + args.phones)
    procs, outs = [], []
    try:
        for i in range(args.wearables):
            out = work / f"w{i}.jsonl"
            outs.append(out)
            procs.append(subprocess.Popen(
                [args.herald, "wearable", "--transport", f"tty:{radio.paths[i]}", "--log-dir", str(work / f"logs{i}"),
                 "--json-events"], stdout=open(out, "w"), stderr=open(work / f"w{i}.err", "w")))
        phone_payloads = []
        for j in range(args.phones):
            payload = "10" + "033a" + "0000" + f"{0xa0 + j:02x}" * 16
            phone_payloads.append(payload)
            procs.append(subprocess.Popen(
                [sys.executable, str(ROOT / "Tests" / "Interop" / "peers" / "herald_phone.py"),
                 f"serial:{radio.paths[args.wearables + j]}", f"C{j + 1}:00:00:00:00:0{j + 1}", "android", payload],
                stdout=open(work / f"phone{j}.log", "w"), stderr=subprocess.STDOUT))
        time.sleep(args.seconds)
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGINT)
        for proc in procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
        radio.close()

    events = [[json.loads(l) for l in open(o) if l.startswith("{")] for o in outs]
    names = [next(e["payload"] for e in ev if e.get("event") == "ready") for ev in events]
    missing = 0
    print(f"bench-wearables: {args.wearables} wearables, {args.phones} Bumble phone(s), {DESCRIPTIONS[args.controller]}, "
          f"{args.seconds:.0f} s")
    for i, ev in enumerate(events):
        detected = {e["target"]: seconds(e["time"]) for e in ev if e.get("event") == "didDetect"}
        reads = {}
        for e in ev:
            if e.get("event") == "didRead":
                reads.setdefault(e.get("shortName") or e["payload"], (e["target"], seconds(e["time"])))
        by_payload = {e["payload"]: e.get("shortName") for e in ev if e.get("event") == "didRead"}
        end = max(seconds(e["time"]) for e in ev if "time" in e)
        peers = [(f"wearable {k}", names[k]) for k in range(len(names)) if k != i]
        peers += [(f"phone {j}", by_payload.get(pl, pl)) for j, pl in enumerate(phone_payloads)]
        for label, key in peers:
            if key not in reads:
                print(f"  wearable {i}: {label}: NOT READ")
                missing += 1
                continue
            target, t_read = reads[key]
            delay = t_read - detected.get(target, t_read)
            measures = sorted(seconds(e["time"]) for e in ev if e.get("event") == "didMeasure" and e.get("target") == target)
            windows, t0 = [], t_read
            while t0 + 30 <= end:
                windows.append(sum(1 for t in measures if t0 <= t < t0 + 30))
                t0 += 30
            print(f"  wearable {i}: {label}: first advert -> didRead {delay:.2f} s; readings per 30 s window {windows}")
    print(json.dumps({"work": str(work), "unread": missing}))
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
