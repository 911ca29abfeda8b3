"""The kinds of controller the interop tests run on, behind one interface.

`BumbleRadio`: Bumble's virtual controllers on ptys, linked by Bumble's simulated radio
(peers/controllers.py). Lenient: all-zero BD_ADDR, silent on unknown vendor commands, Extended
Advertising Reports for a legacy scan, RSSI fixed at -50, initiates while scanning.

`ZephyrRadio`: Zephyr's own link layer (the code an nRF52840 Dongle runs with hci_uart) on the
simulated nRF52 of BabbleSim, paced to wall-clock time, one pty per controller. Strict like the
hardware: refuses LE Create Connection while scanning, never starts the Data Length Update itself,
answers Zephyr's vendor commands. Two versions, two kinds (`ZEPHYR_FIXTURES`):
- `zephyr`: Zephyr 3.0.99 (main of 2022-05-02, ../shared/controllers/zephyr-bsim-3.0, or
  $HERALD_ZEPHYR_BSIM), the Zephyr side of the suite;
- `zephyr25`: Zephyr v2.5.0 (../shared/controllers/zephyr-bsim, or $HERALD_ZEPHYR25_BSIM), stricter
  in places (LE Set Advertising Enable in the state already held is 0x0C there, 0x00 in 3.0): the tests
  of those answers and one scenario per role run on it too (`@pytest.mark.controllers`).

All give `paths` (a pty per controller: `tty:PATH` for herald, `serial:PATH` for Bumble peers) and
`close()`; `ZephyrRadio.restart()` kills the whole simulation and starts it again behind the same
paths, as a board that reboots keeps its serial port name.
"""
import itertools
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bsim_fixture import patched_copy

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# The shared folder sits beside the repository (a clean clone's CI layout); HERALD_ZEPHYR_BSIM (3.0.99)
# and HERALD_ZEPHYR25_BSIM (2.5.0) point elsewhere.
SHARED_CONTROLLERS = ROOT.parent / "shared" / "controllers"
ZEPHYR_FIXTURES = {
    "zephyr": Path(os.environ.get("HERALD_ZEPHYR_BSIM", SHARED_CONTROLLERS / "zephyr-bsim-3.0")),
    "zephyr25": Path(os.environ.get("HERALD_ZEPHYR25_BSIM", SHARED_CONTROLLERS / "zephyr-bsim")),
}
KINDS = ("bumble", "zephyr", "zephyr25")
# What a test runs on unless its @pytest.mark.controllers says otherwise: Zephyr 2.5 only where asked.
DEFAULT_KINDS = ("bumble", "zephyr")
# For tools' output and help.
DESCRIPTIONS = {
    "bumble": "Bumble virtual controllers (LocalLink)",
    "zephyr": "Zephyr 3.0.99 controllers (simulated nRF52)",
    "zephyr25": "Zephyr 2.5.0 controllers (simulated nRF52)",
}
# Every simulated radio reports one RSSI for every packet: Bumble's virtual controller -50 dBm, the
# BabbleSim channel (an ideal cable with fixed attenuation) -35 dBm.
FIXED_RSSI = {"bumble": -50, "zephyr": -35, "zephyr25": -35}


def is_zephyr(kind: str) -> bool:
    """Zephyr's link layer, any version."""
    return kind in ZEPHYR_FIXTURES


def wanted_kinds(marked=None):
    """The kinds a test runs on: those its `@pytest.mark.controllers` names (`marked`), else
    DEFAULT_KINDS; HERALD_CONTROLLERS (a comma-separated list: `zephyr`, `bumble,zephyr25`) narrows
    them, and runs a test that names no kind on any kind it lists (`HERALD_CONTROLLERS=zephyr25`: the
    suite on Zephyr 2.5). CI sets none."""
    chosen = os.environ.get("HERALD_CONTROLLERS")
    if not chosen:
        return tuple(marked or DEFAULT_KINDS)
    return tuple(k for k in (marked or KINDS) if k in chosen.split(","))
_ids = itertools.count()


def _patched_controllers(kind: str = "zephyr") -> Path:
    """The tests' copy of the fixture of `kind` (bsim_fixture.py: what is patched and why)."""
    return patched_copy(ZEPHYR_FIXTURES[kind])


def zephyr_available(kind: str = "zephyr") -> str | None:
    """None when the Zephyr controllers of `kind` can run here, else why not."""
    fixture = ZEPHYR_FIXTURES[kind]
    script = fixture / "run-controllers.sh"
    if not script.exists():
        variable = "HERALD_ZEPHYR_BSIM" if kind == "zephyr" else "HERALD_ZEPHYR25_BSIM"
        return f"no Zephyr controller at {fixture} (set {variable})"
    if not Path("/lib/ld-linux.so.2").exists() and not Path("/lib32/ld-linux.so.2").exists():
        return "the 32-bit C library (Debian libc6-i386) is not installed"
    return None


class BumbleRadio:
    kind = "bumble"

    def __init__(self, count: int):
        self.dir = tempfile.mkdtemp(prefix="herald-ctl-")
        # At least two (one alone has nobody to talk to); extra ones just sit on the simulated radio.
        # Our own script: bumble.apps.controllers accepts exactly two transports.
        self.paths = [os.path.join(self.dir, f"hci{i}") for i in range(max(count, 2))]
        self.proc = None
        self.start()

    def start(self):
        # A killed Bumble leaves its pty symlinks behind; a new one refuses to replace them.
        for p in self.paths:
            if os.path.lexists(p):
                os.unlink(p)
        self.log = open(os.path.join(self.dir, "controllers.log"), "a")
        self.proc = subprocess.Popen([sys.executable, str(HERE / "peers" / "controllers.py")] +
                                     [f"pty:{p}" for p in self.paths], stdout=self.log, stderr=subprocess.STDOUT)
        # Python and Bumble's imports alone took over 20 s at a load average of 25-34 (helpers building
        # beside the tests): four runs of test_wearable's scenario failed there before any test ran.
        deadline = time.time() + 60
        while not all(os.path.exists(p) for p in self.paths):
            if self.proc.poll() is not None or time.time() > deadline:
                # A late one is not left behind (each failed start used to leave its process running).
                self.stop()
                raise RuntimeError(f"bumble controllers did not start in 60 s: {open(self.log.name).read()}")
            time.sleep(0.05)

    def stop(self):
        """Kills the controllers at once, as a board that loses power."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()

    def restart(self, down_for: float = 1.0):
        self.stop()
        time.sleep(down_for)
        self.start()

    def keep_logs(self, dest: Path) -> None:
        """The controllers' log (Bumble's warnings: a PDU for a link it does not know) into `dest`."""
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy(os.path.join(self.dir, "controllers.log"), dest / "controllers.log")

    def ended(self) -> str | None:
        """How Bumble's controllers ended by themselves; None while they run."""
        if self.proc is None or self.proc.poll() is None:
            return None
        return f"Bumble's controllers ended: exit status {self.proc.returncode}; {open(self.log.name).read()[-500:]}"

    def close(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self.log.closed:
            self.log.close()


# The Herald reference's C++ apps ship with the 2.5 fixture (built against its Zephyr).
APPS = ZEPHYR_FIXTURES["zephyr25"] / "apps"


def apps_available(kind: str = "zephyr25") -> str | None:
    """None when the Herald reference's C++ apps (zephyr-bsim/apps) can run on a radio of `kind`
    here, else why not."""
    why = zephyr_available(kind)
    if why:
        return why
    if not APPS.is_dir():
        return f"no Herald reference apps in {APPS}"
    if not any(Path(d, "libstdc++.so.6").exists() for d in ("/lib32", "/usr/lib32", "/usr/lib/i386-linux-gnu")):
        return "the 32-bit C++ library (Debian lib32stdc++6) is not installed"
    return None


class ZephyrRadio:
    def __init__(self, count: int, poll_us: int = 500, kind: str = "zephyr", apps: tuple[str, ...] = ()):
        """`count` controllers of `kind` (`zephyr`: 3.0.99, `zephyr25`: 2.5.0) on one radio. `apps`:
        whole Zephyr applications from the 2.5 fixture's apps/ (the Herald reference's C++ wearable and
        venue beacon, built with 2.5) put on the same radio after the controllers; `app_log(i)` is app
        i's output."""
        why = apps_available(kind) if apps else zephyr_available(kind)
        if why:
            raise RuntimeError(why)
        self.kind = kind
        self.apps = list(apps)
        self.dir = tempfile.mkdtemp(prefix="herald-zephyr-")
        self.paths = [os.path.join(self.dir, f"hci{i}") for i in range(max(count, 2))]
        # One simulation id per radio: BabbleSim keeps its FIFOs per id under /tmp/bs_$USER.
        self.sim = f"herald_{os.getpid()}_{next(_ids)}"
        self.poll_us = poll_us
        self.programs = _patched_controllers(kind)
        self.proc = None
        self.start()

    @property
    def logs(self) -> str:
        return os.path.join(self.dir, "logs")

    def app_log(self, index: int) -> str:
        """App `index`'s printk and Zephyr log (run-controllers.sh numbers apps after the controllers)."""
        name = Path(self.apps[index]).name.removesuffix(".exe")
        return os.path.join(self.logs, f"app{len(self.paths) + index}-{name}.log")

    def start(self):
        os.makedirs(self.logs, exist_ok=True)
        self._kernel_lines = len(_kernel_log())
        self.log = open(os.path.join(self.dir, "run.log"), "a")
        # Polling the pty every 500 µs instead of 250 halves the controllers' CPU (each ~15 % of a
        # core then) and adds at most 0.5 ms per HCI packet, well inside a connection event.
        self.proc = subprocess.Popen(
            [str(self.programs / "run-controllers.sh"), "-s", self.sim, "-l", self.logs,
             "-x", f"-hci_pty_poll_us={self.poll_us}"]
            # The patched copy has no apps/: each is given by its path in the shared folder.
            + [a for app in self.apps for a in ("-a", str(APPS / app))] + self.paths,
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 30
        while not all(os.path.islink(p) for p in self.paths):
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                raise RuntimeError(f"zephyr controllers did not start: {open(self.log.name).read()}")
            time.sleep(0.05)

    def stop(self):
        """Kills every controller of the simulation, as boards that lose power."""
        if self.proc and self.proc.poll() is None:
            # The script stops its simulation processes on SIGTERM; the group catches any straggler.
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self.log.close()
        # run-controllers.sh names the FIFO folder after $USER, or the login name when unset.
        user = os.environ.get("USER") or pwd.getpwuid(os.getuid()).pw_name
        shutil.rmtree(f"/tmp/bs_{user}/{self.sim}", ignore_errors=True)

    def restart(self, down_for: float = 1.0):
        """Kills every controller and starts them again behind the same paths (fresh state, as after
        a power cycle)."""
        self.stop()
        time.sleep(down_for)
        self.start()

    def close(self):
        if not self.log.closed:
            self.stop()

    def keep_logs(self, dest: Path) -> None:
        """Every controller's, the phy's and the pacer's log into `dest`."""
        shutil.copytree(self.logs, dest, dirs_exist_ok=True)

    def ended(self) -> str | None:
        """Which simulation process ended the radio by itself, and how (exit status or signal), with the
        kernel's word on it when it trapped (dmesg: a division, a segfault); None while it runs or when
        it was stopped."""
        try:
            line = Path(self.logs, "ended.txt").read_text().strip()
        except FileNotFoundError:
            return None
        # The kernel names the thread that trapped (a simulated device's threads are host threads), not
        # the process: every trap of a simulation program since this radio started, which may include
        # another simulation's on a shared machine.
        traps = [l for l in _kernel_log()[self._kernel_lines:]
                 if ("trap" in l or "segfault" in l) and ("zephyr" in l or "herald-cpp" in l or "bs_2G4" in l)]
        return line + self._last_error(line) + (f"; dmesg since this radio started: {' | '.join(traps[-3:])}" if traps else "")

    def _last_error(self, ended: str) -> str:
        """The last ERROR line of each device log that has one (BabbleSim's models and tracing say why
        they stop there: "ERROR: (file:line): ..."), or nothing. Every log, not only that of the
        process named: when one device stops, the phy ends the others, and `wait -n` may hear of one
        of those first (CI once reported "controller 0 ended: exit status 0")."""
        errors = []
        for log in sorted(Path(self.logs).glob("*.log")):
            lines = [l.strip() for l in log.read_text(errors="replace").splitlines() if "ERROR" in l]
            if lines:
                errors.append(f"{log.name}: {lines[-1]}")
        return f"; {' | '.join(errors)}" if errors else ""

def _kernel_log() -> list[str]:
    """The kernel's ring buffer (traps and segfaults of crashed programs), or nothing where it cannot be read."""
    try:
        return subprocess.run(["dmesg"], capture_output=True, text=True, timeout=10).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return []


def open_radio(kind: str, count: int, poll_us: int = 500):
    """`poll_us`: how often each Zephyr controller polls its pty (Bumble's radio has no such thing)."""
    return ZephyrRadio(count, poll_us=poll_us, kind=kind) if is_zephyr(kind) else BumbleRadio(count)
