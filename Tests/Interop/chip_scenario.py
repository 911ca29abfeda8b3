"""What test_chip.py needs around its scenario: the two images built for the simulated nRF52 with the
test's payload period and epoch, the payloads `herald keys derive` computes for them, `herald check`
on each single-chip device, and the first-advert-to-read delays its benchmark prints."""
import json
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import pytest

import chip
from periods import iso
from radio import apps_available, wanted_kinds

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SDK = ROOT.parent / "shared" / "zephyr-sdk"
# The images are built with test options into a folder of their own: test_chip_build builds the same
# targets with the default options into .build/firmware, maybe at the same time (pytest-xdist runs two
# modules at once), and a program being relinked while it runs fails the link.
OUT = ROOT / ".build" / "firmware-test-chip"
BUILD = OUT / "zephyr" / "nrf52_bsim"
SHARED_CORE = ROOT / ".build" / "firmware" / "zephyr" / "core-i686"
# The images' payload period: 60 s, so the windows cross one rotation (at 60 s) and herald-for-cpp's
# wearable, which reads an address once and stays stuck on an address that stopped advertising
# (README "Tested against the Herald reference implementation"), meets two addresses, not four.
PERIOD = 60


def firmware_available():
    """None when the images can be built and run here, else why not."""
    why = apps_available("zephyr25") if "zephyr25" in wanted_kinds(("zephyr25",)) else \
        "runs on Zephyr 2.5's radio only (the images are simulated nRF52s built with Zephyr 2.5)"
    if why:
        return why
    if not (SDK / "unpack.sh").exists():
        return f"no Zephyr SDK at {SDK} (the offline Zephyr 2.5 bundle)"
    return None


def build_images(epoch):
    """Builds both images with a PERIOD payload period and `epoch`; returns (wearable, beacon, key)."""
    core = OUT / "zephyr" / "core-i686"
    if not (core / "core.stamp").exists() and (SHARED_CORE / "core.stamp").exists():
        # The core modules Tools/firmware compiled for i686 already (its stamp, copied with its time,
        # still says whether they are current), rather than a minute or more of compiling them again.
        shutil.copytree(SHARED_CORE, core, dirs_exist_ok=True)
    env = dict(os.environ, FIRMWARE_PAYLOAD_PERIOD=str(PERIOD), FIRMWARE_EPOCH=str(epoch), FIRMWARE_OUT=str(OUT))
    r = subprocess.run([str(ROOT / "Tools" / "firmware"), "build", "wearable@nrf52_bsim", "beacon@nrf52_bsim"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    if r.returncode == 2 and "missing" in r.stderr:
        # A build tool or the SDK is not installed: Tools/firmware says which in one line.
        pytest.skip(r.stderr.strip().splitlines()[-1])
    if r.returncode != 0:
        pytest.fail(f"Tools/firmware build failed ({r.returncode}): {r.stderr[-3000:]}")
    wearable, beacon = BUILD / "wearable" / "zephyr" / "zephyr.exe", BUILD / "beacon" / "zephyr" / "zephyr.exe"
    key = BUILD / "wearable" / "secret.key"
    for path in (wearable, beacon, key):
        assert path.exists(), f"{path}: not built ({r.stdout[-1500:]})"
    return wearable, beacon, key, r.stdout


def derive(herald_bin, key, epoch, t, period=PERIOD, codes=()):
    """The Simple payload (hex) `herald keys derive` computes for Unix time `t` (`epoch` None: the
    standard epoch and period, as `herald wearable` has them by default; `codes`: its country and state
    options)."""
    schedule = ["--epoch", iso(epoch), "--payload-period", str(period)] if epoch is not None else []
    r = subprocess.run([herald_bin, "keys", "derive", "--secret-key-file", str(key), *schedule, *codes, "--time", iso(t)],
                       capture_output=True, text=True, check=True)
    return r.stdout.strip().splitlines()[-1].split(",")[-1].lower()


# The image's payload header (Firmware/Wearable/main.swift: Simple payload, country 826, state 4).
CHIP_CODES = ("--country", "826", "--state", "4")


def period_payloads(herald_bin, key, epoch, count):
    """[the image's payload of period 0, 1, ... count-1] from `epoch`."""
    return [derive(herald_bin, key, epoch, epoch + k * PERIOD + 1, codes=CHIP_CODES) for k in range(count)]


def check(herald_bin, path, address, capture):
    """`herald check --active` on `address`: (exit status, {rule: verdict}, stderr)."""
    r = subprocess.run([herald_bin, "check", "--transport", f"tty:{path}", "--json", "--address", address,
                        "--duration", "4", "--active", "--btsnoop", str(capture)], capture_output=True, text=True, timeout=120)
    verdicts = [json.loads(line) for line in r.stdout.splitlines() if line.strip().startswith("{")]
    return r.returncode, {v["rule"]: v for v in verdicts}, r.stderr


def run_checks(herald_bin, radio, wearable, beacon, work, out):
    """Checks the single-chip beacon as soon as its address is known, then the single-chip wearable just
    after one of its rotations (its address changes every PERIOD seconds: a check takes about 10 s)."""
    try:
        deadline = time.monotonic() + 60
        while not beacon.addresses and time.monotonic() < deadline:
            time.sleep(0.2)
        if beacon.addresses:
            out["beacon"] = check(herald_bin, radio.paths[2], beacon.addresses[-1][1], work / "check-beacon.btsnoop")
        # The first address set at or after a boundary, no more than 3 s into its period.
        seen = len(wearable.addresses)
        deadline = time.monotonic() + 2 * PERIOD + 30
        while time.monotonic() < deadline:
            fresh = [(t, a) for t, a in wearable.addresses[seen:] if t >= PERIOD - 1 and (t + 1) % PERIOD < 4]
            if fresh:
                out["wearable"] = check(herald_bin, radio.paths[2], fresh[-1][1], work / "check-wearable.btsnoop")
                out["wearable_address"] = fresh[-1]
                break
            seen = len(wearable.addresses)
            time.sleep(0.2)
    except Exception as error:  # reported by the tests that need the result
        out["error"] = repr(error)


def targets_of(events, payloads):
    return {e["target"] for _, e in events if e.get("event") == "didRead" and e.get("payload") in payloads}


def first_to_read(pairs):
    """Median and worst of [(first heard, read)] delays, as text."""
    delays = sorted(r - h for h, r in pairs if h is not None and r is not None)
    if not delays:
        return "no reads"
    return f"median {statistics.median(delays):.2f} s, worst {delays[-1]:.2f} s ({len(delays)} reads)"


def reader_delays(events, payloads):
    """[(first didDetect, first didRead)] per target a Herald wearable's events read `payloads` from."""
    out = []
    for target in targets_of(events, payloads):
        detected = [t for t, e in events if e.get("event") == "didDetect" and e.get("target") == target]
        read = [t for t, e in events if e.get("event") == "didRead" and e.get("target") == target]
        out.append((min(detected) if detected else None, min(read)))
    return out


def cpp_delays(log, payloads):
    """[(first didMeasure of the address, didRead)] of the C++ wearable's reads of `payloads` (its didRead
    names the target by the address's first 4 octets, little-endian)."""
    first, out = {}, []
    for t, body in chip.lines(log):
        if "didMeasure:" in body and "fromTarget: " in body:
            address = body.split("fromTarget: ")[1][:17].lower()
            first.setdefault("".join(reversed(address.split(":")))[:8], t)
        elif "didRead: " in body and "with payload: " in body:
            target, payload = body.split("didRead: ")[1][:8], body.split("with payload: ")[1].split("\x1b")[0].strip()
            if payload in payloads:
                out.append((first.get(target), t))
    return out
