"""The copy of a Zephyr controller fixture (../shared/controllers/zephyr-bsim*) the tests run: its
controllers' division by zero patched, its script pacing the simulation with bsim_pacer.py and naming
the process that ends a radio. `radio.ZephyrRadio` runs it; `patched_copy` makes it.
"""
import hashlib
import shutil
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


# Zephyr's ll_tx_mem_enqueue (ull_conn.c in v2.5.0 and 3.0.99, CONFIG_BT_CTLR_THROUGHPUT, which this build has through
# CONFIG_BT_CTLR_FORCE_MD_AUTO) computes the host's TX rate as bits x 1e9 / the time since its 1 s
# window began. A host that writes two ACL packets at once after a second of quiet gets both enqueued
# in the same 30.5 us tick: the time is 0, and the 64-bit division by zero (__udivdi3) is SIGFPE on the
# simulation's x86, which kills the controller. (Found in the captures of two wearables and of
# `herald serve` streaming notifications: every crash followed several ACL packets in one write.)
# The rate then feeds force_md_cnt_calc once seven packets are in the window, which divides 251 x 8
# x 1e6 by it in 32 bits: a rate of 0 is a second SIGFPE (dmesg: "divide error" at that `divl`, 17
# times in one day of runs, the last killing the flood central's controller in test_hostile_centrals).
# Both come from the simulation: a pty hands the controller a burst of packets in one simulated
# instant, where a UART at 1 Mbaud spreads seven ACL packets over a millisecond, many ticks. The
# tests run a copy of the controller whose __udivdi3 answers a zero divisor with all ones: a burst
# in no time is the fastest rate there is, force_md_cnt_calc then asks for no forced MD, and nothing
# divides by zero. Everything else is the shared build byte for byte. The pattern occurs exactly
# once in each program of both versions (zephyr.exe and zephyr-extadv.exe).
_UDIVDI3_ZERO_PATH = bytes.fromhex("89d985db750b" "b801000000" "31d2" "f7f3" "89c1")
_UDIVDI3_EPILOGUE = bytes.fromhex("89fa83c41c5b5e5f5dc3")


def _patch_udivdi3(exe: bytes, name: str) -> bytes:
    """`exe` with __udivdi3's division by zero returning all ones (see above)."""
    at = exe.find(_UDIVDI3_ZERO_PATH)
    if at < 0 or exe.find(_UDIVDI3_ZERO_PATH, at + 1) >= 0:
        raise RuntimeError(f"{name}: __udivdi3's division-by-zero path not found exactly once; update "
                           "Tests/Interop/radio.py for this build")
    epilogue = exe.rfind(_UDIVDI3_EPILOGUE, at - 0x80, at)
    if epilogue < 0:
        raise RuntimeError(f"{name}: __udivdi3's epilogue not found before its division-by-zero path")
    # or $-1,%edi; or $-1,%eax; jmp epilogue (which returns %edi:%eax = all ones), then nops.
    fix_at = at + 6
    jump = epilogue - (fix_at + 8)
    patch = bytes.fromhex("83cfff83c8ffeb") + jump.to_bytes(1, "little", signed=True)
    patch += b"\x90" * (11 - len(patch))
    return exe[:fix_at] + patch + exe[fix_at + 11:]


# The controller programs of a fixture (the extended-advertising build is there in both versions).
_PROGRAMS = ("zephyr.exe", "zephyr-extadv.exe")

# The fixture's script paces simulated time with BabbleSim's handbrake, which stalls every 50 ms of
# simulated time until wall-clock time reaches start + simulated time: ahead, the controllers stand
# still for up to 50 ms at a time (a board never does); behind, they run free until caught up. The
# copy runs bsim_pacer.py there instead (every 2.5 ms, a lag over 5 ms given up; docs/zephyr-controllers.md).
_HANDBRAKE = './bs_device_handbrake -s="$SIM" -d=$i -r="$RATIO" > "$LOGDIR/handbrake.log" 2>&1 &'
_PACER = 'python3 ./bsim_pacer.py -s "$SIM" -d $i --ratio "$RATIO" > "$LOGDIR/pacer.log" 2>&1 &'


# The fixture's script says only "a simulation process exited" when one device ends the whole radio.
# The copy names it (the phy, controller i, app device i or the pacer), with its exit status or the
# signal that ended it, in run.log and in LOGDIR/ended.txt (`ZephyrRadio.ended()`): the evidence a test
# that loses its radio reports (docs/ci-flakes.md). A status over 128 is a signal only when it names
# one: BabbleSim's own errors (bs_trace_error) exit with 255, which an earlier copy reported as
# "killed by signal 127".
_WAIT_ANY = 'wait -n "${PIDS[@]}"\necho "a simulation process exited; stopping (see $LOGDIR)" >&2'
_WAIT_ANY_NAMED = r'''ENDED=; wait -n -p ENDED "${PIDS[@]}"; STATUS=$?
if [ -n "$ENDED" ]; then
  for k in "${!PIDS[@]}"; do [ "${PIDS[$k]}" = "$ENDED" ] && IDX=$k; done
  if [ "$IDX" = 0 ]; then WHO="the phy"; elif [ "$IDX" -le "$N" ]; then WHO="controller $((IDX-1))"
  elif [ "$IDX" -le $((N+NA)) ]; then WHO="app device $((IDX-1))"; else WHO="the pacer"; fi
  if [ "$STATUS" -gt 128 ] && SIG=$(kill -l $((STATUS-128)) 2>/dev/null); then HOW="killed by signal $((STATUS-128)) ($SIG)"
  else HOW="exit status $STATUS"; fi
  echo "$(date +%T.%N | cut -c1-12) $WHO (pid $ENDED) ended: $HOW" | tee "$LOGDIR/ended.txt" >&2
fi
echo "a simulation process exited; stopping (see $LOGDIR)" >&2'''


def _paced_script(script: str, name: str) -> str:
    """The fixture's run-controllers.sh with bsim_pacer.py where the handbrake was, and naming the
    process that ended the simulation (above)."""
    if script.count(_HANDBRAKE) != 1:
        raise RuntimeError(f"{name}: the handbrake's command line not found exactly once; update Tests/Interop/radio.py")
    if script.count(_WAIT_ANY) != 1:
        raise RuntimeError(f"{name}: the wait for any process not found exactly once; update Tests/Interop/radio.py")
    return script.replace(_HANDBRAKE, _PACER).replace(_WAIT_ANY, _WAIT_ANY_NAMED)


def patched_copy(fixture: Path) -> Path:
    """A copy of the controller fixture in `fixture` whose programs' 64-bit division by zero returns
    all ones (see above), made once per build and patch (named after a hash of the patched programs)
    and shared by every test process."""
    programs = {name: (fixture / "bin" / name).read_bytes() for name in _PROGRAMS if (fixture / "bin" / name).exists()}
    if "zephyr.exe" not in programs:
        raise RuntimeError(f"{fixture}/bin/zephyr.exe: not found")
    patched = {name: _patch_udivdi3(exe, f"{fixture}/bin/{name}") for name, exe in programs.items()}
    script = _paced_script((fixture / "run-controllers.sh").read_text(), f"{fixture}/run-controllers.sh")
    pacer = (HERE / "bsim_pacer.py").read_bytes()
    digest = hashlib.sha256()
    for name in sorted(programs):
        digest.update(patched[name])
    digest.update(script.encode())
    digest.update(pacer)
    home = Path(tempfile.gettempdir()) / f"herald-zephyr-bsim-{digest.hexdigest()[:16]}"
    if all((home / "bin" / name).exists() for name in patched):
        return home
    staging = Path(tempfile.mkdtemp(prefix="herald-zephyr-bsim-"))
    shutil.copytree(fixture / "bin", staging / "bin")
    shutil.copytree(fixture / "lib", staging / "lib")
    (staging / "run-controllers.sh").write_text(script)
    (staging / "run-controllers.sh").chmod(0o755)
    (staging / "bin" / "bsim_pacer.py").write_bytes(pacer)
    for name, exe in patched.items():
        (staging / "bin" / name).write_bytes(exe)
    try:
        staging.rename(home)
    except OSError:  # another test process made it first
        shutil.rmtree(staging, ignore_errors=True)
    return home
