#!/usr/bin/env python3
"""Runs EDTT's GATT server tests against a host on a Zephyr 2.5 controller's pty: the fixture's
foreign mode (../shared/conformance/edtt-gatt/run-edtt-gatt.sh, whose README explains the pieces),
with one difference: simulated time is paced by bsim_pacer.py instead of BabbleSim's handbrake.

The handbrake lets the simulation run free whenever it is behind wall-clock time, which EDTT's own
pauses make it most of the time, so EDTT's 100 ms (simulated) waits for an ATT response shrank to a
few milliseconds of wall-clock time for our host, and a test failed whenever the scheduler made the
host wait longer (bsim_pacer.py has the figures, docs/edtt.md the runs). The fixture's script takes no
other pacing device, so the same processes are started here, with the same arguments, the pacer as
phy device 3 where the handbrake was.

usage: edtt_run.py [-C TESTS] [-s SIM] [-l LOGDIR] [-t SECS] [-v N] -- HOST_COMMAND
HOST_COMMAND runs with bash -c, with EDTT_DUT_PTY, EDTT_DUT_RELAY, EDTT_GATT_DB and FIXTURE set as the
fixture's script sets them. Exit status: the number of failed tests (EDTT's), 124 on the timeout.
"""
import argparse
import getpass
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_FIXTURE = Path(os.environ.get("HERALD_EDTT_GATT", HERE.parents[1].parent / "shared" / "conformance" / "edtt-gatt"))


def run(host: str, tests: str, sim: str, logdir: Path, fixture: Path = DEFAULT_FIXTURE, timeout: float = 1800,
        verbosity: int = 2) -> subprocess.CompletedProcess:
    """One EDTT run; returns EDTT's process (its stdout: the per-test PASSED/FAILED lines)."""
    fixture = fixture.resolve()
    bin_ = fixture / "bin"
    logdir.mkdir(parents=True, exist_ok=True)
    logdir = logdir.resolve()
    user = os.environ.get("USER") or getpass.getuser()
    env = dict(os.environ, USER=user)   # BabbleSim keeps its FIFOs under /tmp/bs_$USER
    tests_path = Path(tests)
    if tests_path.is_file():
        tests = str(tests_path.resolve())
    elif tests == "":
        tests = str(fixture / "tests" / "gatt.test_list")
    procs: list[subprocess.Popen] = []

    def start(args, log: str, cwd: Path = bin_, extra_env=None):
        out = open(logdir / log, "w")
        procs.append(subprocess.Popen(args, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                      env=dict(env, **(extra_env or {})), start_new_session=True))
        out.close()

    s = f"-s={sim}"
    try:
        # Devices 0-2 as in the script's foreign mode; 3 is the pacer, where the handbrake was.
        start(["./bs_2G4_phy_v1", s, "-D=4", "-sim_length=3600e6", "-nodump", "-v=2"], "phy.log")
        start(["./bs_device_EDTT_bridge", s, "-d=0", "-AutoTerminate", "-RxWait=2.5e3", "-D=2", "-dev0=1",
               "-dev1=2", "-v=2"], "bridge.log")
        start(["./edtt_hci_tester.exe", s, "-d=1", "-v=2", "-RealEncryption=1"], "tester.log")
        start(["./hci_pty_controller.exe", s, "-d=2", f"-hci_pty_link={logdir / 'hci_pty'}", "-RealEncryption=1"],
              "dut-controller.log")
        start([sys.executable, str(HERE / "bsim_pacer.py"), "-s", sim, "-d", "3"], "pacer.log")
        start(["python3", str(bin_ / "edtt_dut_relay.py"), "-s", sim, "-d", "2", "--listen", str(logdir / "relay.sock"),
               "--ready-file", str(logdir / "dut.ready")], "relay.log")
        # The pty appears at once; the relay's socket once the bridge has opened the FIFOs.
        for _ in range(200):
            if (logdir / "hci_pty").is_symlink() and (logdir / "relay.sock").exists():
                break
            time.sleep(0.1)
        start(["bash", "-c", host], "host.log", cwd=fixture, extra_env={
            "EDTT_DUT_PTY": str(logdir / "hci_pty"), "EDTT_DUT_RELAY": str(logdir / "relay.sock"),
            "EDTT_GATT_DB": str(fixture / "edtt" / "src" / "components" / "GATT Database.xml"),
            "FIXTURE": str(fixture)})
        edtt_env = dict(env)
        # EDTT imports numpy (random numbers only); the fixture's stand-in when it is absent.
        if subprocess.run(["python3", "-c", "import numpy"], capture_output=True).returncode != 0:
            edtt_env["PYTHONPATH"] = str(bin_ / "pyshim") + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        # gattdata.py opens 'src/components/GATT Database.xml' relative to the working directory.
        edtt = subprocess.run(["timeout", str(int(timeout)), "python3", "src/edttool.py", s, "-d=0",
                               "--transport", "bsim_dut", "--dut-ready-file", str(logdir / "dut.ready"),
                               "-T", "gatt_verification", "-C", tests, f"-v={verbosity}"],
                              cwd=fixture / "edtt", env=edtt_env, capture_output=True, text=True)
        (logdir / "edtt.log").write_text(edtt.stdout + edtt.stderr)
        return edtt
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 2
        for p in procs:
            try:
                p.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for name in ("hci_pty", "relay.sock", "dut.ready"):
            (logdir / name).unlink(missing_ok=True)
        shutil.rmtree(f"/tmp/bs_{user}/{sim}", ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-C", dest="tests", default="", help="a test ID, 'all', or a list file (default: the fixture's list)")
    ap.add_argument("-s", dest="sim", default=f"edtt_gatt_{os.getpid()}")
    ap.add_argument("-l", dest="logdir")
    ap.add_argument("-t", dest="timeout", type=float, default=1800)
    ap.add_argument("-v", dest="verbosity", type=int, default=2, help="EDTT's; 6-7 show the ATT traffic")
    ap.add_argument("--fixture", type=Path, default=DEFAULT_FIXTURE)
    ap.add_argument("host", nargs=argparse.REMAINDER, help="-- HOST_COMMAND")
    a = ap.parse_args()
    host = [w for w in a.host if w != "--"]
    if not host:
        ap.error("the host command is missing (after --)")
    if not (a.fixture / "bin" / "bs_2G4_phy_v1").is_file():
        ap.error(f"no EDTT GATT fixture at {a.fixture}")
    logdir = Path(a.logdir or f"/tmp/edtt-logs.{a.sim}")
    started = time.monotonic()
    r = run(" ".join(host), a.tests, a.sim, logdir, a.fixture, a.timeout, a.verbosity)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    print(f"edtt exit status {r.returncode}; wall time {time.monotonic() - started:.1f} s; logs in {logdir}",
          file=sys.stderr)
    sys.exit(r.returncode)


if __name__ == "__main__":
    main()
