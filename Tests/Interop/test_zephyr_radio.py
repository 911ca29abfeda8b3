"""The simulated Zephyr controllers themselves, as the tests run them (`radio.py`).

Zephyr's TX-rate statistic in `ll_tx_mem_enqueue` divides by the time since its 1 s window began, and
`force_md_cnt_calc` then divides by the rate: a pty hands the controller a burst of ACL packets in one
simulated instant, so both divisions met zero and the controller died of SIGFPE, stopping the whole
radio mid-test (17 crashes in one day of runs before the second was found). `radio.py` runs a copy
whose 64-bit division by zero answers all ones; this test is the burst that killed the first copy.
"""
import subprocess
import sys
from pathlib import Path

import pytest

PEERS = Path(__file__).parent / "peers"


@pytest.mark.controllers("zephyr", "zephyr25", reason="the patched copies of both Zephyr versions' controllers")
def test_a_burst_of_acl_packets_after_a_quiet_second_leaves_the_controllers_running(controllers):
    radio = controllers(2)
    # Three rounds of 12 Write Commands, each after 1.5 s of quiet: with the copy that answered 0,
    # the first round's eighth packet was SIGFPE ("Floating point exception" in the radio's log).
    out = subprocess.run([sys.executable, str(PEERS / "acl_burst.py"), f"serial:{radio.paths[0]}",
                          f"serial:{radio.paths[1]}", "3", "12", "1.5"], capture_output=True, text=True, timeout=120)
    alive = radio.proc.poll() is None
    log = open(radio.log.name).read()
    assert "Floating point exception" not in log, log[-600:]
    assert alive, log[-600:]
    assert out.returncode == 0 and out.stdout.splitlines()[-1] == "ok", (out.stdout, out.stderr[-1500:])
    assert [l for l in out.stdout.splitlines() if l.startswith("burst ")] == ["burst 1", "burst 2", "burst 3"]
