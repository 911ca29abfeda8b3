"""The two kinds of controller the interop tests run on, behind one interface.

`BumbleRadio`: Bumble's virtual controllers on ptys, linked by Bumble's simulated radio
(peers/controllers.py). Lenient: all-zero BD_ADDR, silent on unknown vendor commands, Extended
Advertising Reports for a legacy scan, RSSI fixed at -50, initiates while scanning.

`ZephyrRadio`: Zephyr's own link layer (v2.5.0, the code an nRF52840 Dongle runs with hci_uart) on
the simulated nRF52 of BabbleSim, paced to wall-clock time, one pty per controller
(../shared/controllers/zephyr-bsim). Strict like the hardware: refuses LE Create Connection while
scanning, never starts the Data Length Update itself, answers Zephyr's vendor commands.

Both give `paths` (a pty per controller: `tty:PATH` for herald, `serial:PATH` for Bumble peers) and
`close()`; `ZephyrRadio.restart()` kills the whole simulation and starts it again behind the same
paths, as a board that reboots keeps its serial port name.
"""
import hashlib
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

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# The shared folder sits beside the repository (a clean clone's CI layout); HERALD_ZEPHYR_BSIM
# points elsewhere.
ZEPHYR_BSIM = Path(os.environ.get("HERALD_ZEPHYR_BSIM", ROOT.parent / "shared" / "controllers" / "zephyr-bsim"))
KINDS = ("bumble", "zephyr")
# Both simulated radios report one RSSI for every packet: Bumble's virtual controller -50 dBm, the
# BabbleSim channel (an ideal cable with fixed attenuation) -35 dBm.
FIXED_RSSI = {"bumble": -50, "zephyr": -35}
_ids = itertools.count()


# Zephyr v2.5.0's ll_tx_mem_enqueue (ull_conn.c, CONFIG_BT_CTLR_THROUGHPUT, which this build has through
# CONFIG_BT_CTLR_FORCE_MD_AUTO) computes the host's TX rate as bits x 1e9 / the time since its 1 s
# window began. A host that writes two ACL packets at once after a second of quiet gets both enqueued
# in the same 30.5 us tick: the time is 0, and the 64-bit division by zero (__udivdi3) is SIGFPE on the
# simulation's x86, which kills the controller. On the nRF52's Cortex-M the same division goes to
# __aeabi_uldivmod, whose division by zero returns, so a real dongle only gets a wrong rate. The tests
# run a copy of the controller whose __udivdi3 returns 0 for a zero divisor, as the hardware does;
# everything else is the shared build byte for byte. (Found in the captures of two wearables and of
# `herald serve` streaming notifications: every crash followed several ACL packets in one write.)
_UDIVDI3_ZERO_PATH = bytes.fromhex("89d985db750b" "b801000000" "31d2" "f7f3" "89c1")
_UDIVDI3_EPILOGUE = bytes.fromhex("89fa83c41c5b5e5f5dc3")


def _patched_controllers() -> Path:
    """A copy of the zephyr-bsim programs whose 64-bit division by zero returns 0 (see above)."""
    exe = (ZEPHYR_BSIM / "bin" / "zephyr.exe").read_bytes()
    at = exe.find(_UDIVDI3_ZERO_PATH)
    if at < 0 or exe.find(_UDIVDI3_ZERO_PATH, at + 1) >= 0:
        raise RuntimeError(f"{ZEPHYR_BSIM}/bin/zephyr.exe: __udivdi3's division-by-zero path not found exactly "
                           "once; update Tests/Interop/radio.py for this build")
    epilogue = exe.rfind(_UDIVDI3_EPILOGUE, at - 0x80, at)
    if epilogue < 0:
        raise RuntimeError("zephyr.exe: __udivdi3's epilogue not found before its division-by-zero path")
    stamp = hashlib.sha256(exe).hexdigest()[:16]
    home = Path(tempfile.gettempdir()) / f"herald-zephyr-bsim-{stamp}"
    if (home / "bin" / "zephyr.exe").exists():
        return home
    staging = Path(tempfile.mkdtemp(prefix="herald-zephyr-bsim-"))
    shutil.copytree(ZEPHYR_BSIM / "bin", staging / "bin")
    shutil.copytree(ZEPHYR_BSIM / "lib", staging / "lib")
    shutil.copy2(ZEPHYR_BSIM / "run-controllers.sh", staging / "run-controllers.sh")
    # xor %edi,%edi; xor %eax,%eax; jmp epilogue (which returns %edi:%eax = 0), then nops.
    fix_at = at + 6
    jump = epilogue - (fix_at + 6)
    patch = bytes.fromhex("31ff31c0eb") + jump.to_bytes(1, "little", signed=True)
    patch += b"\x90" * (11 - len(patch))
    patched = exe[:fix_at] + patch + exe[fix_at + 11:]
    (staging / "bin" / "zephyr.exe").write_bytes(patched)
    try:
        staging.rename(home)
    except OSError:  # another test process made it first
        shutil.rmtree(staging, ignore_errors=True)
    return home


def zephyr_available() -> str | None:
    """None when the Zephyr controllers can run here, else why not."""
    script = ZEPHYR_BSIM / "run-controllers.sh"
    if not script.exists():
        return f"no Zephyr controller at {ZEPHYR_BSIM} (set HERALD_ZEPHYR_BSIM)"
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
        deadline = time.time() + 20
        while not all(os.path.exists(p) for p in self.paths):
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"bumble controllers did not start: {open(self.log.name).read()}")
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


def apps_available() -> str | None:
    """None when the Herald reference's C++ apps (zephyr-bsim/apps) can run here, else why not."""
    why = zephyr_available()
    if why:
        return why
    if not (ZEPHYR_BSIM / "apps").is_dir():
        return f"no Herald reference apps in {ZEPHYR_BSIM}/apps"
    if not any(Path(d, "libstdc++.so.6").exists() for d in ("/lib32", "/usr/lib32", "/usr/lib/i386-linux-gnu")):
        return "the 32-bit C++ library (Debian lib32stdc++6) is not installed"
    return None


class ZephyrRadio:
    kind = "zephyr"

    def __init__(self, count: int, poll_us: int = 500, apps: tuple[str, ...] = ()):
        """`apps`: whole Zephyr applications from zephyr-bsim/apps (the Herald reference's C++ wearable
        and venue beacon) put on the same radio after the controllers; `app_log(i)` is app i's output."""
        why = apps_available() if apps else zephyr_available()
        if why:
            raise RuntimeError(why)
        self.apps = list(apps)
        self.dir = tempfile.mkdtemp(prefix="herald-zephyr-")
        self.paths = [os.path.join(self.dir, f"hci{i}") for i in range(max(count, 2))]
        # One simulation id per radio: BabbleSim keeps its FIFOs per id under /tmp/bs_$USER.
        self.sim = f"herald_{os.getpid()}_{next(_ids)}"
        self.poll_us = poll_us
        self.programs = _patched_controllers()
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
        self.log = open(os.path.join(self.dir, "run.log"), "a")
        # Polling the pty every 500 µs instead of 250 halves the controllers' CPU (each ~15 % of a
        # core then) and adds at most 0.5 ms per HCI packet, well inside a connection event.
        self.proc = subprocess.Popen(
            [str(self.programs / "run-controllers.sh"), "-s", self.sim, "-l", self.logs,
             "-x", f"-hci_pty_poll_us={self.poll_us}"]
            # The patched copy has no apps/: each is given by its path in the shared folder.
            + [a for app in self.apps for a in ("-a", str(ZEPHYR_BSIM / "apps" / app))] + self.paths,
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


def open_radio(kind: str, count: int):
    return ZephyrRadio(count) if kind == "zephyr" else BumbleRadio(count)
