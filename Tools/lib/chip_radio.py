"""Puts a single-chip Herald app (a Zephyr application for the simulated nRF52, `Tools/firmware build
wearable@nrf52_bsim`) on a simulated Zephyr 2.5 radio beside a `herald wearable` on a zephyr-bsim
controller, and says who read whom as it happens, then a summary. `Tools/firmware run ROLE@nrf52_bsim`
runs it.

usage: chip_radio.py --role wearable|beacon --app EXE [--seconds N] [--keep]

HERALD_BIN=PATH uses that herald binary instead of building one. The radio is the copy of
../shared/controllers/zephyr-bsim the interop tests run (Tests/Interop/radio.py). The app's log
(its events as JSON lines, its HCI, its stack marks) is read with Tests/Interop/chip.py; --keep keeps
it and the wearable's logs, and says where.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "Interop"))
import chip  # noqa: E402
import radio  # noqa: E402


def fail(message, status=2):
    print(f"Tools/firmware run: {message}", file=sys.stderr)
    sys.exit(status)


def find_herald():
    """HERALD_BIN, else the package's debug build (built first), as Tools/demo finds it."""
    if os.environ.get("HERALD_BIN"):
        return os.environ["HERALD_BIN"]
    print("== building herald ==", flush=True)
    r = subprocess.run(["swift", "build", "--product", "herald"], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"swift build --product herald failed: {(r.stderr or r.stdout).strip().splitlines()[-1:]}")
    out = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True)
    return str(Path(out.stdout.strip()) / "herald")


def describe(payload, decoded=None):
    return f"{payload[:12]}… ({decoded})" if decoded else payload


class Report:
    """The reads of both sides, in simulated seconds of the app's log, said as they arrive."""

    def __init__(self, role):
        self.role = role
        self.app = f"the single-chip {role}"
        self.lock = threading.Lock()
        self.app_reads = []      # (t, payload): the app read the hosted wearable
        self.hosted_reads = []   # (t, payload): the hosted wearable read the app
        self.heard = {}          # hosted wearable's target -> first didDetect (t)
        self.app_heard = {}      # app's target -> first didDetect (t)
        self.delays = {"app": [], "hosted": []}

    def say(self, t, text):
        print(f"{t:7.1f} s  {text}", flush=True)

    def app_event(self, t, e):
        name = e.get("event")
        if name == "didDetect":
            self.app_heard.setdefault(e.get("target"), t)
        elif name == "didRead":
            with self.lock:
                self.app_reads.append((t, e.get("payload", "")))
                if e.get("target") in self.app_heard:
                    self.delays["app"].append(t - self.app_heard[e["target"]])
            self.say(t, f"{self.app} read herald wearable: {describe(e.get('payload', ''), e.get('decoded'))}")
        elif name in ("ready", "ownPayload"):
            self.say(t, f"{self.app} serves {e.get('payload', '')}")
        elif name == "payload-read":
            self.say(t, f"{e.get('peer', 'a central')} read {self.app}'s payload (the app's own log)")

    def hosted_event(self, t, e):
        name = e.get("event")
        if name == "didDetect":
            self.heard.setdefault(e.get("target"), t)
        elif name == "didRead":
            with self.lock:
                self.hosted_reads.append((t, e.get("payload", "")))
                if e.get("target") in self.heard:
                    self.delays["hosted"].append(t - self.heard[e["target"]])
            self.say(t, f"herald wearable read {self.app}: {describe(e.get('payload', ''), e.get('decoded'))}")

    def summary(self, seconds, marks):
        def delays(values):
            if not values:
                return ""
            values = sorted(values)
            return f", first advert to read median {values[len(values) // 2]:.2f} s, worst {values[-1]:.2f} s"
        lines = [f"== summary ({seconds:.0f} s simulated) =="]
        if self.role == "wearable":
            lines.append(f"{self.app} read herald wearable {len(self.app_reads)} times, "
                         f"{len({p for _, p in self.app_reads})} payloads{delays(self.delays['app'])}")
        lines.append(f"herald wearable read {self.app} {len(self.hosted_reads)} times, "
                     f"{len({p for _, p in self.hosted_reads})} payloads{delays(self.delays['hosted'])}")
        if marks:
            lines.append("stack high-water marks: " + ", ".join(f"{n} {u}/{s} B" for n, (s, u) in sorted(marks.items())))
        print("\n".join(lines), flush=True)
        return bool(self.hosted_reads) and (self.role != "wearable" or bool(self.app_reads))


def main():
    parser = argparse.ArgumentParser(prog="Tools/firmware run ROLE@nrf52_bsim", description=__doc__.split("\n\n")[0])
    parser.add_argument("--role", required=True, choices=("wearable", "beacon"))
    parser.add_argument("--app", required=True, help="the app's zephyr.exe")
    parser.add_argument("--seconds", type=float, default=60, help="simulated seconds to run (default 60)")
    parser.add_argument("--keep", action="store_true", help="keep the logs")
    args = parser.parse_args()
    app = Path(args.app).resolve()
    if not app.is_file():
        fail(f"{args.app}: no such app (build it with Tools/firmware build {args.role}@nrf52_bsim)")
    why = radio.zephyr_available("zephyr25")
    if why:
        fail(why)
    herald = find_herald()
    work = Path(tempfile.mkdtemp(prefix="herald-chip-radio-"))
    report = Report(args.role)
    print(f"== {report.app} ({app}) and a herald wearable on one simulated Zephyr 2.5 radio, "
          f"{args.seconds:.0f} s; Ctrl-C stops ==", flush=True)
    z = radio.ZephyrRadio(1, kind="zephyr25", apps=(str(app),))
    follow = chip.Follow(z.app_log(0))
    hosted = None
    status = 1
    interrupted = False
    try:
        hosted = subprocess.Popen([herald, "wearable", "--transport", f"tty:{z.paths[0]}", "--log-dir", str(work / "wearable"),
                                   "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        def pump():
            for line in hosted.stdout:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                report.hosted_event(follow.simulated(time.monotonic()) or 0.0, e)
        threading.Thread(target=pump, daemon=True).start()
        seen = 0
        deadline = time.monotonic() + args.seconds + 60
        while follow.now() < args.seconds and time.monotonic() < deadline:
            if z.proc.poll() is not None:
                print("the simulation stopped (the app exited?); see its log", file=sys.stderr)
                break
            if hosted.poll() is not None:
                print(f"herald wearable exited: {hosted.stderr.read()[-500:]}", file=sys.stderr)
                break
            events = follow.events[seen:]
            seen += len(events)
            for t, e in events:
                report.app_event(t, e)
            time.sleep(0.2)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if hosted and hosted.poll() is None:
            hosted.send_signal(signal.SIGINT)
            try:
                hosted.wait(10)
            except subprocess.TimeoutExpired:
                hosted.kill()
        seconds = follow.now()
        follow.close()
        z.close()
        log = Path(z.app_log(0))
        ok = report.summary(seconds, chip.stack_marks(log) if log.exists() else {})
        status = 0 if ok or interrupted else 1
        if args.keep:
            shutil.copy(log, work / "app.log")
            print(f"logs kept in {work} (app.log: the app's; wearable/: the herald wearable's)")
        else:
            shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(z.dir, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
