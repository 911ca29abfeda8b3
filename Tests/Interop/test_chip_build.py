"""The core on the chip itself: the Herald wearable and the venue beacon as Zephyr 2.5 applications
(Firmware/Zephyr), built for the simulated nRF52 and the three real nRF52 boards by `Tools/firmware
build`, and their footprint from Zephyr's own link (the whole image: controller, kernel, our host)
against issue 35's budgets. Builds only; running on the simulated radio is another module's."""
import re
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "Tools" / "firmware"
OUT = ROOT / ".build" / "firmware" / "zephyr"
BOARDS = ["nrf52_bsim", "nrf52840dongle", "nrf52dk_nrf52832", "nrf52840dk"]
ARM_BOARDS = BOARDS[1:]
TARGETS = [f"{role}@{board}" for board in BOARDS for role in ("wearable", "beacon")]
LINE = re.compile(r"^(\w+)@(\w+) flash=(\d+) ram=(\d+)")

# Issue 35: the wearable on the nRF52832 (64 KB RAM) leaves a product at least 24 KB; the beacon fits
# an nRF52810-class part on every board.
WEARABLE_NRF52832_RAM = 40 * 1024
BEACON_FLASH = 128 * 1024
BEACON_RAM = 24 * 1024


@pytest.fixture(scope="module")
def footprint() -> dict[str, tuple[int, int]]:
    """All eight targets, built once: {"ROLE@BOARD": (flash, ram)}."""
    started = time.monotonic()
    out = subprocess.run([str(FIRMWARE), "build", *TARGETS], cwd=ROOT, capture_output=True, text=True,
                         timeout=1800)
    assert out.returncode == 0, f"Tools/firmware build failed:\n{out.stderr[-4000:]}"
    sizes = {}
    for line in out.stdout.splitlines():
        m = LINE.match(line)
        if m:
            sizes[f"{m[1]}@{m[2]}"] = (int(m[3]), int(m[4]))
    assert sorted(sizes) == sorted(TARGETS), out.stdout
    print(f"\n{'target':28} {'flash B':>9} {'RAM B':>8}   (built in {time.monotonic() - started:.0f} s)")
    for target in TARGETS:
        flash, ram = sizes[target]
        note = "  (the Linux program: not a chip's figures)" if target.endswith("@nrf52_bsim") else ""
        print(f"{target:28} {flash:9,} {ram:8,}{note}")
    return sizes


def test_each_target_is_where_the_tools_expect_it(footprint):
    for role in ("wearable", "beacon"):
        assert (OUT / "nrf52_bsim" / role / "zephyr" / "zephyr.exe").is_file()
        for board in ARM_BOARDS:
            assert (OUT / board / role / "zephyr" / "zephyr.hex").is_file()
    # The wearable's key as `herald keys derive --secret-key-file` reads it, beside each image.
    for board in BOARDS:
        key = OUT / board / "wearable" / "secret.key"
        assert key.stat().st_size == 2048 and (key.stat().st_mode & 0o077) == 0
        assert Path(f"{key}.irk").stat().st_size == 16


def test_wearable_on_the_nrf52832_leaves_24_kb_of_ram(footprint):
    flash, ram = footprint["wearable@nrf52dk_nrf52832"]
    assert ram <= WEARABLE_NRF52832_RAM, f"wearable on the nRF52832: {ram} B RAM, budget {WEARABLE_NRF52832_RAM}"


@pytest.mark.parametrize("board", ARM_BOARDS)
def test_beacon_fits_an_nrf52810_class_part(footprint, board):
    flash, ram = footprint[f"beacon@{board}"]
    assert flash <= BEACON_FLASH, f"beacon on {board}: {flash} B flash, budget {BEACON_FLASH}"
    assert ram <= BEACON_RAM, f"beacon on {board}: {ram} B RAM, budget {BEACON_RAM}"
