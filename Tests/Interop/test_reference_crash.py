"""The guard that tells the reference C++ wearable's own crash from any other end of a simulation
(reference_crash.py): only its known instruction, a null dereference, and a log ending in a GATT
callback count; everything else stays a failure. No radio: ended.txt, dmesg and the app's log as
they read in a CI run of 2026-11-29 (docs/ci-flakes.md item 16)."""
from reference_crash import known_reference_crash

ENDED = ("15:20:08.351 app device 9 (pid 18609) ended: killed by signal 11 (SEGV); dmesg since this radio started: "
         "[74862.511214] herald-cpp-wear[18622]: segfault at 0 ip 00000000566473e3 sp 00000000f7a11ee0 error 4 in "
         "herald-cpp-wearable.exe[7e3e3,565e1000+a8000] likely on CPU 1 (core 1, socket 0)")
GATT_END = ("d_09: @00:00:39.458641  [00:00:39.458,618] \x1b[0m<dbg> heraldlogger.log: Sensor,BLE.ConcreteBLEReceiver,"
            "The GATT discovery procedure succeeded for 0200000000c2\x1b[0m\n"
            "d_09: @00:00:39.458641  [00:00:39.458,618] \x1b[0m<dbg> heraldlogger.log: Sensor,BLE.ConcreteBLEReceiver,"
            "    - FOUND Herald android signal characteristic. logging.\x1b[0m\n")
OTHER_END = ("d_09: @00:00:39.447967  [00:00:39.447,967] \x1b[0m<dbg> heraldlogger.log: engine,coordinator,"
             "#################    END    #################\x1b[0m\n")


def test_the_known_crash_is_recognised_with_its_evidence(tmp_path):
    log = tmp_path / "app9-herald-cpp-wearable.log"
    log.write_text(OTHER_END + GATT_END)
    said = known_reference_crash(ENDED, log)
    assert said and "7e3e3" in said and "FOUND Herald android signal characteristic" in said, said


def test_any_other_end_stays_a_failure(tmp_path):
    log = tmp_path / "app9-herald-cpp-wearable.log"
    log.write_text(OTHER_END + GATT_END)
    assert known_reference_crash(None, log) is None
    assert known_reference_crash(ENDED.replace("7e3e3", "7e3f0"), log) is None  # another instruction
    assert known_reference_crash(ENDED.replace("segfault at 0 ", "segfault at 4c "), log) is None
    assert known_reference_crash(ENDED.replace("app device 9", "controller 3"), log) is None  # our side's
    assert known_reference_crash("12:00:00.000 controller 0 ended: exit status 1", log) is None
    log.write_text(GATT_END + OTHER_END * 3)  # the log does not end in a GATT callback
    assert known_reference_crash(ENDED, log) is None
    assert known_reference_crash(ENDED, tmp_path / "missing.log") is None
