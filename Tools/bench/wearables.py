"""Wearables and phones on one radio: how soon each reads the others, and how often it measures them.

usage: python wearables.py HERALD_BIN [--controller bumble|zephyr|zephyr25] [--wearables N] [--beacons N] [--phones N] [--seconds S]

Starts N `herald wearable`s (each with its own Simple payload), N `herald beacon`s (venue beacons,
each its own location code) and N Bumble "Android phones" (Tests/Interop/peers/herald_phone.py, which
advertise again as soon as a central connects, as Android does, so several wearables link at once) on
one radio of the chosen controllers, runs them for S seconds, and prints, for every wearable and
every peer it should find:
  - first advert -> didRead: from the wearable's didDetect of that peer to its didRead (seconds);
  - RSSI readings (didMeasure) of that peer in each full 30 s window after the read, under every
    address it was read as (a payload period changes a wearable's address and target);
and the median and worst first advert -> didRead over all pairs of the run, the same from each
wearable's start (its BLE sensor on: the crowd starts within a fraction of a second, and a peer read
over its link before any advert of it was heard is detected and read at once, which the first figure
counts as 0 s; this one does not), each wearable's own
CPU time (user + system, from /proc) per hour of running among its peers, and where the first reads'
time went, from each wearable's capture (`phases.py`: heard, connect, discover, read).
Exit status 1 when some wearable did not read some peer.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "Interop"))
from radio import DESCRIPTIONS, KINDS, open_radio  # noqa: E402

import pace  # noqa: E402
import phases  # noqa: E402

# Each Zephyr controller polls its pty for the host's bytes every POLL_US of simulated time. At the
# interop tests' 500 µs, eight controllers held the simulation to 0.68 x real time on a 2-core machine,
# though the CPUs were 70 % idle (every poll is a wake-up of the simulated board), and every latency
# measured on the hosts' real clocks came out half as long again. At 2,000 µs the same crowd kept
# real time (docs/crowd-issue-39.md); a host's packet waits at most 2 ms more for its controller.
POLL_US = 2000
# The wearables' advertising interval (`herald wearable --interval-ms`'s default).
WEARABLE_ADVERTISING_MS = 100
PAYLOAD_PERIOD_S = 360


def seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def cpu_seconds(pid: int):
    """User + system CPU seconds a running process has used (/proc/PID/stat fields 14 and 15)."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    p = argparse.ArgumentParser()
    p.add_argument("herald")
    p.add_argument("--controller", choices=KINDS, default="zephyr")
    p.add_argument("--wearables", type=int, default=3)
    p.add_argument("--beacons", type=int, default=1)
    p.add_argument("--phones", type=int, default=1)
    p.add_argument("--seconds", type=float, default=95)
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-wearables-"))
    radio = open_radio(args.controller, args.wearables + args.beacons + args.phones, poll_us=POLL_US)
    procs, outs = [], []
    try:
        for i in range(args.wearables):
            out = work / f"w{i}.jsonl"
            outs.append(out)
            procs.append(subprocess.Popen(
                [args.herald, "wearable", "--transport", f"tty:{radio.paths[i]}", "--log-dir", str(work / f"logs{i}"),
                 "--json-events", "--btsnoop", str(work / f"w{i}.btsnoop")], stdout=open(out, "w"), stderr=open(work / f"w{i}.err", "w")))
        beacon_outs = []
        for b in range(args.beacons):
            out = work / f"b{b}.jsonl"
            beacon_outs.append(out)
            procs.append(subprocess.Popen(
                [args.herald, "beacon", "--transport", f"tty:{radio.paths[args.wearables + b]}", "--country", "826",
                 "--state", "1", "--location-code", str(42 + b), "--json-events",
                 "--btsnoop", str(work / f"b{b}.btsnoop")],
                stdout=open(out, "w"), stderr=open(work / f"b{b}.err", "w")))
        phone_payloads = []
        for j in range(args.phones):
            payload = "10" + "033a" + "0000" + f"{0xa0 + j:02x}" * 16
            phone_payloads.append(payload)
            procs.append(subprocess.Popen(
                [sys.executable, str(ROOT / "Tests" / "Interop" / "peers" / "herald_phone.py"),
                 f"serial:{radio.paths[args.wearables + args.beacons + j]}", f"C{j + 1}:00:00:00:00:0{j + 1}", "android", payload, "--advertise-while-connected"],
                stdout=open(work / f"phone{j}.log", "w"), stderr=subprocess.STDOUT))
        started = time.time()
        time.sleep(args.seconds)
        cpu = [cpu_seconds(proc.pid) for proc in procs[:args.wearables]]
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGINT)
        for proc in procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
        # A simulation that ended by itself (a controller's assert ends the whole radio) is said, and
        # its devices' logs are kept beside the captures: the run's figures are not the crowd's.
        ended = radio.ended()
        if ended:
            radio.keep_logs(work / "controllers")
            print(f"bench-wearables: the radio ended during the run: {ended} (logs: {work / 'controllers'})")
        radio.close()

    events = [[json.loads(l) for l in open(o) if l.startswith("{")] for o in outs]
    # Each wearable's payloads by short name: the one it started with and each later one (a run that
    # crosses a payload period boundary: every wearable's payload and address change at once).
    names = [{e["payload"] for e in ev if e.get("event") in ("ready", "ownPayload")} for ev in events]
    beacon_payloads = []
    for o in beacon_outs:
        # The payload the beacon served, as its first payload-read event shows it (None: nobody read it).
        served = [json.loads(l) for l in open(o) if l.startswith("{") and '"payload-read"' in l]
        beacon_payloads.append(served[0]["payload"] if served else None)
    missing = 0
    delays, from_start = [], []
    print(f"bench-wearables: {args.wearables} wearables, {args.beacons} beacon(s), {args.phones} Bumble phone(s), "
          f"{DESCRIPTIONS[args.controller]}, {args.seconds:.0f} s")
    for i, ev in enumerate(events):
        detected = {e["target"]: seconds(e["time"]) for e in ev if e.get("event") == "didDetect"}
        started_ble = next((seconds(e["time"]) for e in ev if e.get("event") == "didUpdateState"
                            and e.get("sensor") == "ble" and e.get("state") == "on"), None)
        reads, targets_of = {}, {}
        for e in ev:
            if e.get("event") == "didRead":
                key = e.get("shortName") or e["payload"]
                reads.setdefault(key, (e["target"], seconds(e["time"])))
                # Every target a peer was read as: its address, and so its target, changes with each
                # payload period, and its readings continue under the new one.
                targets_of.setdefault(key, set()).add(e["target"])
        by_payload = {e["payload"]: e.get("shortName") for e in ev if e.get("event") == "didRead"}
        end = max(seconds(e["time"]) for e in ev if "time" in e)
        peers = [(f"wearable {k}", names[k]) for k in range(len(names)) if k != i]
        peers += [(f"beacon {b}", {by_payload.get(pl, pl)}) for b, pl in enumerate(beacon_payloads)]
        peers += [(f"phone {j}", {by_payload.get(pl, pl)}) for j, pl in enumerate(phone_payloads)]
        for label, keys in peers:
            found = [reads[k] for k in keys if k in reads]
            if not found:
                print(f"  wearable {i}: {label}: NOT READ")
                missing += 1
                continue
            target, t_read = min(found, key=lambda r: r[1])
            delay = t_read - detected.get(target, t_read)
            delays.append(delay)
            if started_ble is not None:
                from_start.append(t_read - started_ble)
            followed = set().union(*(targets_of[k] for k in keys if k in targets_of))
            measures = sorted(seconds(e["time"]) for e in ev if e.get("event") == "didMeasure" and e.get("target") in followed)
            windows, t0 = [], t_read
            while t0 + 30 <= end:
                windows.append(sum(1 for t in measures if t0 <= t < t0 + 30))
                t0 += 30
            print(f"  wearable {i}: {label}: first advert -> didRead {delay:.2f} s; readings per 30 s window {windows}")
    median, worst = median_and_worst(delays)
    if delays:
        print(f"  first advert -> didRead over {len(delays)} pairs: median {median:.2f} s, worst {worst:.2f} s")
    median_start, worst_start = median_and_worst(from_start)
    if from_start:
        print(f"  wearable's start -> first didRead over {len(from_start)} pairs: median {median_start:.2f} s, "
              f"worst {worst_start:.2f} s")
    per_hour = [c / args.seconds * 3600 for c in cpu if c is not None]
    if per_hour:
        print(f"  wearable CPU (user + system) among {args.wearables - 1 + args.beacons + args.phones} peers: "
              + ", ".join(f"{c:.0f}" for c in per_hour) + " CPU s per hour")
    rotated = sum(1 for n in names if len(n) > 1)
    if rotated:
        # Every wearable's payload and address change at a 360 s period boundary, and every pair is
        # read again: a run that crosses one carries about twice the links of one that does not.
        # The periods are 360 s from the standard epoch (KeyEpoch.standard), a multiple of 360 in Unix time.
        boundary = (int(started) // PAYLOAD_PERIOD_S + 1) * PAYLOAD_PERIOD_S - started
        print(f"  a payload period ended {boundary:.0f} s into the run: {rotated} of {len(names)} wearables changed "
              "payload and address, and their peers read them again")
    captures = [str(work / f"w{i}.btsnoop") for i in range(args.wearables)]
    # The wearables advertise resolvable private addresses; the beacon and the phones static ones.
    ran = pace.pace_of_captures(captures, WEARABLE_ADVERTISING_MS)
    if ran is not None:
        print(f"  simulation pace (the wearables' advert gaps): {ran:.2f} x real time")
        if ran < 0.95:
            print("  bench-wearables: the radio fell behind real time, so every latency above is stretched "
                  f"by about {1 / ran:.2f} x: these are not the crowd's figures")
    print("  where the first reads' time went (each wearable's capture):")
    sys.argv[1:] = captures
    tried = phases.main()
    print(json.dumps({"work": str(work), "unread": missing, "pairs": len(delays), "median": median, "worst": worst,
                      "medianFromStart": median_start, "worstFromStart": worst_start,
                      "cpuSecondsPerHour": per_hour, "attempts": tried, "pace": ran,
                      "periodEnded": rotated > 0}))
    sys.exit(1 if missing else 0)


def median_and_worst(values):
    """(median, largest) of `values`; (None, None) for none."""
    if not values:
        return None, None
    return statistics.median(values), max(values)


if __name__ == "__main__":
    main()
