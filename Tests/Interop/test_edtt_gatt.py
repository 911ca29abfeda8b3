"""The Bluetooth SIG's GATT server test purposes (EDTT's gatt_verification: GATT/SR/... and
GAP/GAT/...) against `herald serve --profile edtt` on a Zephyr 2.5 link layer, over BabbleSim.

The fixture is ../shared/conformance/edtt-gatt (its README explains the pieces): EDTT plays the
GATT client from a tester device over the simulated radio; our host serves the SIG's test
databases on the HCI pty of the DUT's controller and carries out EDTT's three DUT commands
(switch service set, notify, indicate) from the fixture's relay. One run of the whole list (69
tests EDTT implements), about 5 minutes, launched by edtt_run.py: the fixture's foreign mode with
simulated time paced by bsim_pacer.py, which never lets it run faster than wall-clock time (the
fixture's handbrake does whenever the simulation is behind, and then our host's few milliseconds
became EDTT's 100 ms timeouts). docs/edtt.md has the record.
"""
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import edtt_run
import snoop

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(os.environ.get("HERALD_EDTT_GATT", ROOT.parent / "shared" / "conformance" / "edtt-gatt"))
EXPECTED = 69   # the IDs of tests/gatt.test_list EDTT 7dd56fc implements (4 listed ones it skips)

# Tests whose expectation contradicts the Core specification (docs/edtt.md has each PDU trace). They
# must fail, for these reasons: one that starts passing means our server changed its answer, which
# this module wants to hear about as much as a new failure.
EDTT_CONTRADICTS_CORE = {
    # No LTK exists on the unpaired link: Core 5.4 Vol 3 Part C 10.3.1 wants Insufficient
    # Authentication; EDTT wants Zephyr 2.5's Insufficient Encryption (and the test purposes named
    # "Insufficient Encryption Key Size" never encrypt).
    "GATT/SR/GAR/BI-11-C": "Insufficient Encryption expected without an LTK (Part C 10.3.1)",
    "GATT/SR/GAR/BI-17-C": "Insufficient Encryption expected without an LTK (Part C 10.3.1)",
    "GATT/SR/GAR/BI-22-C": "Insufficient Encryption expected without an LTK (Part C 10.3.1)",
    "GATT/SR/GAW/BI-06-C": "Insufficient Encryption expected without an LTK (Part C 10.3.1)",
    "GATT/SR/GAW/BI-13-C": "Insufficient Encryption expected without an LTK (Part C 10.3.1)",
    # EDTT's XML holds the Database Hash Zephyr 2.5 computed over characteristic declarations cut
    # to 16 octets (128-bit UUIDs lose 3); Core 5.4 Vol 3 Part G 7.3.1 hashes the whole value.
    "GATT/SR/GAR/BV-04-C": "Database Hash of sets 1-3 as Zephyr 2.5 truncated it (Part G 7.3.1)",
    "GATT/SR/GAR/BV-05-C": "Database Hash of sets 1-3 as Zephyr 2.5 truncated it (Part G 7.3.1)",
    # Write Commands to characteristics whose properties lack Write Without Response (Part G 3.3.1.1).
    "GATT/SR/GAW/BV-01-C": "Write Command to characteristics without Write Without Response (Part G 3.3.1.1)",
}

pytestmark = pytest.mark.skipif(not (FIXTURE / "run-edtt-gatt.sh").is_file(),
                                reason=f"EDTT GATT fixture not found at {FIXTURE}")


def test_tables_are_what_the_generator_writes():
    """Sources/HeraldRuntime/Roles/EDTTGATTTables.swift is Tools/edtt-gatt-db's output for EDTT's XML."""
    xml = FIXTURE / "edtt" / "src" / "components" / "GATT Database.xml"
    r = subprocess.run([sys.executable, str(ROOT / "Tools" / "edtt-gatt-db"), str(xml), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_sig_gatt_server_test_purposes_pass(herald_bin, tmp_path):
    sim = f"herald_edtt_{os.getpid()}_{int(time.time() * 1000) % 100000}"
    host = (f"{herald_bin} serve --profile edtt --btsnoop {tmp_path / 'host.btsnoop'} --transport tty:$EDTT_DUT_PTY "
            f"--edtt-relay $EDTT_DUT_RELAY")
    started = time.monotonic()
    r = edtt_run.run(host, "", sim, tmp_path, FIXTURE, timeout=900)
    wall = time.monotonic() - started
    results = dict(re.findall(r"^(\S+/\S+/\S+)\s+\[.*\]\s+(PASSED|FAILED)\s*$", r.stdout, re.M))
    passed = sorted(t for t, v in results.items() if v == "PASSED")
    failed = sorted(t for t, v in results.items() if v == "FAILED")
    print(f"EDTT GATT: {len(passed)}/{EXPECTED} passed in {wall:.0f} s; failed: {' '.join(failed) or 'none'}")
    for t in failed:
        print(f"  {t}: {EDTT_CONTRADICTS_CORE.get(t, 'NEW FAILURE')}")
    assert r.returncode != 124, f"EDTT run timed out; logs in {tmp_path}\n{r.stdout[-3000:]}"
    new = sorted(set(failed) - set(EDTT_CONTRADICTS_CORE))
    assert not new, f"failed: {' '.join(new)} (logs and our capture in {tmp_path}; rerun one with Tests/Interop/edtt_run.py -C ID -v 6 -- HOST)"
    now_passing = sorted(set(EDTT_CONTRADICTS_CORE) & set(passed))
    assert not now_passing, f"now passing, so our answer changed: {' '.join(now_passing)} (see docs/edtt.md)"
    assert len(passed) == EXPECTED - len(EDTT_CONTRADICTS_CORE), \
        f"{len(passed)} passed, {EXPECTED - len(EDTT_CONTRADICTS_CORE)} expected\n{r.stdout[-3000:]}"
    # No LE Set PHY (0x2032) of ours: EDTT's disconnect fails on an LE PHY Update Complete between the
    # Disconnect's Command Status and Disconnection Complete (docs/edtt.md), whichever test it hits.
    sent = snoop.commands(tmp_path / "host.btsnoop")
    assert 0x200A in sent, "the capture holds no LE Set Advertising Enable: not our host's"
    assert 0x2032 not in sent, f"LE Set PHY sent {sent.count(0x2032)} times"
