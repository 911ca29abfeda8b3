"""What the firmware images link, checked from a build alone (no QEMU, no radio): each image leaves
out the core's optional features its type leaves out (`Tools/firmware build` prints the features it
links, from their witness symbols, Firmware/features.py), and its flash is within its budget (RAM
all in is checked where it is measured, running, in test_firmware.py). About a minute: the build of
the two Cortex-M4 images (mps2-an386) and the micro:bit's beacon (Cortex-M0)."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "Tools" / "firmware"
IMAGES = ["beacon", "wearable", "beacon@microbit"]

# What each image's type leaves out (Firmware/Beacon/main.swift, Firmware/Wearable/main.swift), by
# the names of Firmware/features.py. The beacon only advertises and serves its payload: no scanning
# or central role (HeraldPeripheralApplication), no inbound-link policy (`.open`), no LE 2M PHY
# requests nor PHY Update tracking, an identity address (no rotation), signals dropped unread, no
# prepare queue, no sparse GATT table lookups (ConsecutiveGATTHandles). It keeps the
# advertising-enable queue, as every advertiser must (a central can stop advertising between an
# enable and its answer). The wearable asks for no LE 2M PHY (HeraldSensor), does not follow PHY
# updates (its SensorLog) and serves a dense table too.
LEFT_OUT = {
    "beacon": {"scanning", "central", "inbound-policy", "phy-requests", "phy-updates", "rotation", "signals",
               "prepare-queue", "sparse-tables"},
    "wearable": {"phy-requests", "phy-updates", "sparse-tables"},
}
LEFT_OUT["beacon@microbit"] = LEFT_OUT["beacon"]


@pytest.fixture(scope="module")
def build_report() -> dict[str, dict]:
    env = dict(os.environ, FIRMWARE_MEASURE="0")
    out = subprocess.run([str(FIRMWARE), "build", *IMAGES], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=1800)
    assert out.returncode == 0, out.stderr[-3000:]
    print(out.stdout)
    report: dict[str, dict] = {image: {} for image in IMAGES}
    for line in out.stdout.splitlines():
        label, _, rest = line.partition(": ")
        if label not in report:
            continue
        if rest.startswith("flash "):
            report[label]["flash"] = int(rest.split()[1])
        elif rest.startswith("features linked: "):
            linked = rest[len("features linked: "):].split(";")[0].split()
            report[label]["features"] = {f for f in linked if f != "-"}
    return report


@pytest.mark.parametrize("image", IMAGES)
def test_image_links_no_feature_its_type_leaves_out(build_report, image):
    linked = build_report[image].get("features")
    assert linked is not None, f"{image}: no features line in Tools/firmware build's output"
    unexpected = sorted(linked & LEFT_OUT[image])
    assert not unexpected, f"{image}: links {', '.join(unexpected)}, which its type leaves out"


# Flash budgets (issue 37; `Tools/firmware build` prints them too): the beacon 24 KB on both boards,
# the wearable on the Cortex-M4 issue 37's 56 KB (reached in its seventh round: 57,120 B). The
# beacon's goal beyond its budget, 16 KB, is shown out of reach in docs/footprint.md.
FLASH_BUDGET = {"beacon": 24576, "wearable": 57344, "beacon@microbit": 24576}
# While an image is still over its budget, it may not grow past what it measured when it was last
# made smaller (docs/footprint.md, issue 37): the next feature that adds flash fails here the day it
# lands. Lower these as the images shrink; remove an image once it is within its budget. None is
# over now: the micro:bit beacon, the last, came within its 24,576 B in issue 37's sixth round
# (24,312 B at its end), and is held to the budget itself above.
FLASH_CEILING: dict[str, int] = {}


def over_budget(image: str):
    return pytest.param(image, marks=pytest.mark.xfail(
        strict=True, reason=f"{image} is still over its flash budget (docs/footprint.md, issue 37)"))


@pytest.mark.parametrize("image", [over_budget(i) if i in FLASH_CEILING else i for i in IMAGES])
def test_image_flash_within_budget(build_report, image):
    flash = build_report[image]["flash"]
    assert flash <= FLASH_BUDGET[image], f"{image}: flash {flash} B, over its {FLASH_BUDGET[image]} B budget"


@pytest.mark.parametrize("image", sorted(FLASH_CEILING))
def test_image_over_budget_does_not_grow(build_report, image):
    flash = build_report[image]["flash"]
    assert flash <= FLASH_CEILING[image], \
        f"{image}: flash {flash} B, grown past the {FLASH_CEILING[image]} B it measured (budget {FLASH_BUDGET[image]} B)"
