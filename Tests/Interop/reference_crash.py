"""The herald-for-cpp wearable's own crash, told apart from every other way a simulation ends.

The reference C++ wearable (`../shared/controllers/zephyr-bsim/apps`) dereferences a null pointer in
its GATT callbacks when a discovery or read completes after its own periodic restart of scanning and
advertising has ended the link (docs/ci-flakes.md items 13 and 16): the kernel reports `segfault at 0`
at the same instruction of `herald-cpp-wearable.exe`, 7e3e3, every time, and its log ends in a GATT
callback (a discovery that "succeeded", a characteristic "FOUND", a "GATT read error"). A simulated
device that dies ends the whole BabbleSim simulation, and with it every test on that radio.

`known_reference_crash` says whether a simulation ended that way, with the evidence; a fixture then
runs its scenario once more, and only if the reference crashes again turns the module's tests into
expected failures naming it. Any other end (another instruction, another program, a log that does
not end in a GATT callback) is not this crash and stays a failure.
"""
from pathlib import Path

KNOWN_INSTRUCTION = "herald-cpp-wearable.exe[7e3e3,"
GATT_CALLBACK_WORDS = ("GATT discovery procedure", "FOUND Herald", "GATT read")


class ReferenceCrashed(Exception):
    """The scenario's simulation ended with the reference's known crash (the message is the evidence)."""


def known_reference_crash(ended: str | None, app_log) -> str | None:
    """The evidence, if `ended` (`ZephyrRadio.ended()`: ended.txt with dmesg) is the reference wearable's
    known crash and its log `app_log` ends in a GATT callback; None otherwise."""
    if not ended or not app_log:
        return None
    first = ended.split(";")[0]
    if "app device" not in first or "signal 11" not in first:
        return None
    if KNOWN_INSTRUCTION not in ended or "segfault at 0 " not in ended:
        return None
    try:
        lines = [l for l in Path(app_log).read_text(errors="replace").splitlines() if "heraldlogger" in l]
    except OSError:
        return None
    last = lines[-3:]
    if not any(word in l for l in last for word in GATT_CALLBACK_WORDS):
        return None
    said = last[-1].split("heraldlogger.log:")[-1].strip().replace("\x1b[0m", "")
    return f"{first.strip()} at 7e3e3 (the reference's known null dereference); its log's last line: {said}"
