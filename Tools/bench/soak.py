"""An hour (or any number of minutes) of Herald wearables on Zephyr's controller: a benchmark, not a test.

usage: python soak.py HERALD_BIN [--minutes M] [--wearables N] [--no-cpp] [--sample S] [--work DIR]

On one simulated radio (Zephyr v2.5.0's link layer on BabbleSim, as the reference C++ wearable is a
Zephyr 2.5 device; 3.0.99's with --no-cpp; the patched copies the interop tests run,
Tests/Interop/radio.py): N `herald wearable`s (the Simple payload on the specification's 360 s
period, so an hour is ten address and payload rotations), one Bumble "Android phone"
(Tests/Interop/peers/herald_phone.py) and, unless --no-cpp, the reference C++ wearable
(herald-for-cpp, ../shared/controllers/zephyr-bsim/apps/herald-cpp-wearable.exe, added with
run-controllers.sh -a). Every S seconds it samples each wearable's resident memory (VmRSS) and
reads the counters each prints with `--stats --stats-interval S`. At the end it reports:
  - resident memory over time, and its growth after warm-up (the first 10 % of the run, at least 2 min);
  - every counter that should stay bounded (links, ACL queue and credits, device database entries):
    range after warm-up and the last value;
  - refused HCI commands: every Command Complete / Command Status with a non-zero status in the
    wearables' btsnoop captures, and `command-failed` events (none expected);
  - controller restarts and port reopens (none expected);
  - `herald analyse` continuity between our wearables (the goal: >= 99.9 %), and who read whom
    (the phone's and the C++ wearable's payloads).
Writes everything (logs, captures, soak.json) to the work directory and prints where.
"""
import argparse
import json
import os
import pwd
import signal
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "Interop"))
import radio  # noqa: E402

CPP_WEARABLE = "herald-cpp-wearable.exe"
# The reference C++ wearable's fixed test payload (../shared/controllers/zephyr-bsim/README.md).
CPP_PAYLOAD = "083a03" + "0000" + "d202964900000000"
PHONE_PAYLOAD = "10" + "033a" + "0000" + "a0" * 16
# Counters that must not grow without bound; their range after warm-up is reported.
BOUNDED = ("connections", "centralLinks", "devices", "creditsInFlight", "aclQueued")
# Counters that must stay at zero on a healthy run.
ZERO = ("restarts", "reopens", "droppedCommands", "aclQueueFullEvents", "malformedACL", "malformedEvents",
        "oversizePackets", "rejectedHeaders", "skippedBytes")


def rss_kib(pid: int):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def refused_commands(path: Path):
    """(opcode, status) of every Command Complete / Command Status with a non-zero status, from a
    btsnoop capture of H4 packets (RFC 1761 framing, datalink 1002)."""
    refused = []
    data = path.read_bytes() if path.exists() else b""
    at = 16
    while at + 24 <= len(data):
        _, included, _, _, _ = struct.unpack(">IIIIQ", data[at:at + 24])
        packet = data[at + 24:at + 24 + included]
        at += 24 + included
        if len(packet) < 3 or packet[0] != 0x04:
            continue
        code, params = packet[1], packet[3:]
        if code == 0x0E and len(params) >= 4 and params[3] != 0:  # ncmd, opcode, status
            refused.append((struct.unpack("<H", params[1:3])[0], params[3]))
        elif code == 0x0F and len(params) >= 4 and params[0] != 0:  # status, ncmd, opcode
            refused.append((struct.unpack("<H", params[2:4])[0], params[0]))
    return refused


# Refusals with a known cause, named in the report (opcode, status).
KNOWN_REFUSALS = {
    (0x2022, 0x1A): "LE Set Data Length: Unsupported Remote Feature (a peer whose controller lacks Data Length "
                    "Extension, found by its feature exchange; the link stays at 27 octets)",
}


def radio_kind(cpp: bool) -> str:
    """The reference C++ wearable is a whole Zephyr 2.5 device: with it the radio is 2.5's; without it,
    Zephyr 3.0.99's (the suite's default Zephyr)."""
    return "zephyr25" if cpp else "zephyr"


def start_radio(work: Path, count: int, cpp: bool):
    programs = radio._patched_controllers(radio_kind(cpp))
    sim = f"herald_soak_{os.getpid()}"
    paths = [str(work / f"hci{i}") for i in range(count)]
    apps = ["-a", str(radio.APPS / CPP_WEARABLE)] if cpp else []
    log = open(work / "run-controllers.log", "w")
    proc = subprocess.Popen([str(programs / "run-controllers.sh"), "-s", sim, "-l", str(work / "zephyr-logs"),
                             "-x", "-hci_pty_poll_us=500"] + apps + paths,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.time() + 60
    while not all(os.path.islink(p) for p in paths):
        if proc.poll() is not None or time.time() > deadline:
            raise RuntimeError(f"zephyr controllers did not start: {(work / 'run-controllers.log').read_text()}")
        time.sleep(0.1)
    return proc, paths, sim


def stop_radio(proc, sim: str):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
    user = os.environ.get("USER") or pwd.getpwuid(os.getuid()).pw_name
    subprocess.run(["rm", "-rf", f"/tmp/bs_{user}/{sim}"])


def record_sample(work: Path, t: int, rss: list):
    with open(work / "memory.tsv", "a") as f:
        f.write("\t".join([str(t)] + [str(x or 0) for x in rss]) + "\n")
    # The machine's 1-minute load average: the controllers are paced to wall-clock time, so a loaded
    # machine shows in the figures (a controller that falls behind misses connection events).
    with open(work / "load.tsv", "a") as f:
        f.write(f"{t} {open('/proc/loadavg').read().split()[0]}\n")


def load_samples(work: Path):
    """(seconds since the start, [VmRSS KiB per wearable]) per sample."""
    out = []
    for line in (work / "memory.tsv").read_text().splitlines():
        t, *r = line.split("\t")
        out.append((int(t), [int(x) or None for x in r]))
    return out


def stats_series(err: Path):
    """Each `herald-stats:` line the wearable printed: (seconds since the first, counters)."""
    series = []
    for line in err.read_text(errors="replace").splitlines():
        if line.startswith("herald-stats: "):
            series.append(json.loads(line[len("herald-stats: "):]))
    return series


def main():
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    p = argparse.ArgumentParser()
    p.add_argument("herald")
    p.add_argument("--minutes", type=float, default=60)
    p.add_argument("--wearables", type=int, default=3)
    p.add_argument("--no-cpp", action="store_true", help="without the reference C++ wearable")
    p.add_argument("--sample", type=float, default=30, help="seconds between memory and counter samples")
    p.add_argument("--work", help="work directory (default: a new one under $TMPDIR)")
    p.add_argument("--report-only", action="store_true", help="report on the run already in --work")
    args = p.parse_args()
    if args.report_only:
        meta = json.loads((Path(args.work) / "run.json").read_text())
        report(args, Path(args.work), meta["wearables"], load_samples(Path(args.work)), meta["elapsed"])
        return
    kind = radio_kind(not args.no_cpp)
    why = radio.apps_available(kind) if not args.no_cpp else radio.zephyr_available(kind)
    if why:
        sys.exit(f"soak: {why}")
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="herald-soak-"))
    work.mkdir(parents=True, exist_ok=True)
    n = args.wearables
    seconds = args.minutes * 60
    print(f"soak: {n} wearables, a Bumble phone{'' if args.no_cpp else ', the C++ reference wearable'} on "
          f"{radio.DESCRIPTIONS[kind]} for {args.minutes:g} min; work directory {work}", flush=True)
    rproc, paths, sim = start_radio(work, n + 1, not args.no_cpp)
    env = dict(os.environ, HERALD_KEYS_DIR=str(work / "keys"))
    wearables, others = [], []
    started = time.monotonic()
    try:
        for i in range(n):
            wearables.append(subprocess.Popen(
                [args.herald, "wearable", "--transport", f"tty:{paths[i]}", "--log-dir", str(work / f"wearable-{i}"),
                 "--name", f"wearable-{i}", "--json", "--stats", "--stats-interval", f"{args.sample:g}",
                 "--btsnoop", str(work / f"wearable-{i}.btsnoop")],
                stdout=open(work / f"wearable-{i}.events", "w"), stderr=open(work / f"wearable-{i}.err", "w"), env=env))
        others.append(subprocess.Popen(
            [sys.executable, str(ROOT / "Tests" / "Interop" / "peers" / "herald_phone.py"), f"serial:{paths[n]}",
             "C1:00:00:00:00:01", "android", PHONE_PAYLOAD],
            stdout=open(work / "phone.log", "w"), stderr=subprocess.STDOUT))
        next_sample = started
        while (now := time.monotonic()) < started + seconds:
            if now >= next_sample:
                record_sample(work, round(now - started), [rss_kib(w.pid) for w in wearables])
                next_sample += args.sample
            dead = [i for i, w in enumerate(wearables) if w.poll() is not None]
            if dead or rproc.poll() is not None or others[0].poll() is not None:
                print(f"soak: stopped early after {now - started:.0f} s: "
                      + (f"wearable(s) {dead} exited" if dead else "the radio or the phone exited"), flush=True)
                break
            time.sleep(1)
        record_sample(work, round(time.monotonic() - started), [rss_kib(w.pid) for w in wearables])
    finally:
        for proc in wearables + others:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in wearables + others:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
        stop_radio(rproc, sim)
    elapsed = time.monotonic() - started
    (work / "run.json").write_text(json.dumps({"wearables": n, "elapsed": elapsed}))
    report(args, work, n, load_samples(work), elapsed)


def report(args, work: Path, n: int, samples, elapsed: float):
    warm = max(120, 0.1 * elapsed)
    out = {"work": str(work), "minutes": round(elapsed / 60, 1), "wearables": n, "cpp": not args.no_cpp}
    print(f"soak: ran {elapsed / 60:.1f} min; warm-up {warm:.0f} s")
    if (work / "load.tsv").exists():
        load = [float(l.split()[1]) for l in (work / "load.tsv").read_text().splitlines() if l.strip()]
        if load:
            out["load"] = {"min": min(load), "mean": round(sum(load) / len(load), 1), "max": max(load), "cpus": os.cpu_count()}
            print(f"machine load (1-min average, {os.cpu_count()} CPUs): {min(load):.1f}-{max(load):.1f}, "
                  f"mean {sum(load) / len(load):.1f}")
    # Resident memory.
    print("resident memory (VmRSS, MiB) over time, one column per wearable:")
    step = max(1, len(samples) // 13)
    for t, r in samples[::step] + ([samples[-1]] if (len(samples) - 1) % step else []):
        print(f"  {t:5d} s  " + "  ".join(f"{x / 1024:6.1f}" if x else "     -" for x in r))
    mem = []
    for i in range(n):
        after = [r[i] for t, r in samples if t >= warm and r[i]]
        if not after:
            continue
        mem.append({"wearable": i, "min_kib": min(after), "max_kib": max(after), "first_kib": after[0], "last_kib": after[-1]})
        print(f"  wearable {i}: after warm-up {min(after) / 1024:.1f}-{max(after) / 1024:.1f} MiB "
              f"(first {after[0] / 1024:.1f}, last {after[-1] / 1024:.1f}: growth {(after[-1] - after[0])} KiB)")
    out["memory"] = mem
    # Counters.
    counters = {}
    print("counters from --stats every %g s (range after warm-up; last):" % args.sample)
    for i in range(n):
        series = stats_series(work / f"wearable-{i}.err")
        if not series:
            print(f"  wearable {i}: no statistics")
            continue
        k = max(1, int(warm // args.sample))
        tail = series[k:] or series[-1:]
        c = {}
        for name in BOUNDED + ZERO:
            values = [s.get(name) for s in tail if name in s]
            if values:
                c[name] = {"min": min(values), "max": max(values), "last": series[-1].get(name)}
        counters[i] = c
        print(f"  wearable {i}: " + ", ".join(f"{k} {v['min']}-{v['max']} ({v['last']})" for k, v in c.items() if k in BOUNDED))
        nonzero = {k: v["last"] for k, v in c.items() if k in ZERO and v["last"]}
        print(f"  wearable {i}: " + (f"NON-ZERO {nonzero}" if nonzero else "restarts, reopens, dropped commands, ACL queue full, malformed: all 0"))
    out["counters"] = counters
    # Refused commands.
    refused = {}
    for i in range(n):
        r = refused_commands(work / f"wearable-{i}.btsnoop")
        failed = sum(1 for l in open(work / f"wearable-{i}.events") if '"command-failed"' in l)
        refused[i] = {"hci": len(r), "commandFailedEvents": failed,
                      "examples": sorted({f"0x{op:04x}/0x{st:02x}" for op, st in r})[:8]}
        print(f"  wearable {i}: refused HCI commands {len(r)} {refused[i]['examples'] or ''}; command-failed events {failed}")
        for key in sorted(set(r)):
            print(f"    0x{key[0]:04x}/0x{key[1]:02x} x{r.count(key)}: {KNOWN_REFUSALS.get(key, 'cause not known')}")
    out["refused"] = refused
    # Who read whom.
    reads = {}
    for i in range(n):
        events = [json.loads(l) for l in open(work / f"wearable-{i}.events") if l.startswith("{")]
        payloads = [e.get("payload", "") for e in events if e.get("event") == "didRead"]
        reads[i] = {"didRead": len(payloads), "phone": sum(1 for pl in payloads if pl.lower().startswith(PHONE_PAYLOAD)),
                    "cpp": sum(1 for pl in payloads if pl.lower().startswith(CPP_PAYLOAD))}
        print(f"  wearable {i}: {len(payloads)} payload reads ({reads[i]['phone']} of the phone, {reads[i]['cpp']} of the C++ wearable)")
    out["reads"] = reads
    phone_reads = sum(1 for l in open(work / "phone.log") if l.startswith("read payload"))
    print(f"  phone: our payload read {phone_reads} times by wearables")
    out["phoneServed"] = phone_reads
    # Continuity between our wearables.
    herald = args.herald
    a = subprocess.run([herald, "analyse", "--output", str(work)] + [str(work / f"wearable-{i}") for i in range(n)],
                       capture_output=True, text=True)
    (work / "analyse.txt").write_text(a.stdout + a.stderr)
    print("herald analyse:")
    print("".join("  " + l + "\n" for l in a.stdout.splitlines()), end="")
    try:
        rows = (work / "formal-summary.csv").read_text().splitlines()
        summary = dict(zip(rows[0].split(","), rows[1].split(",")))
        out["continuityPct"] = float(summary["continuitypct"])
        out["detectionPct"] = float(summary["detectionpct"])
    except (OSError, KeyError, IndexError, ValueError):
        out["continuityPct"] = None
    (work / "soak.json").write_text(json.dumps(out, indent=1))
    print(json.dumps({k: out[k] for k in ("work", "minutes", "continuityPct")}))


if __name__ == "__main__":
    main()
