"""Tools/demo's checks (Tools/lib/demo_report.py) can fail: a wearable that read only the beacon, or read a
payload that is not the other wearable's, fails the demo; so does continuity below 99 %."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "Tools" / "lib" / "demo_report.py"
A, B, BEACON = "10000000000b39295d5fba6a1a7b3df229792d1918", "1000000000aa" + "00" * 15, "30033a000000003039"


def write_run(tmp: Path, reads_a, reads_b, continuity="100.00%"):
    (tmp / "wearable-a.payloads").write_text(A + "\n")
    (tmp / "wearable-b.payloads").write_text(B + "\n")
    (tmp / "beacon.payloads").write_text(BEACON + "\n")
    for name, reads in (("wearable-a", reads_a), ("wearable-b", reads_b)):
        lines = [json.dumps({"event": "ready", "identityAddress": "D3:5A:C5:C4:01:E5", "payload": "AAAAAA"})]
        lines += [json.dumps({"event": "didRead", "payload": p, "shortName": "x", "target": "T1"}) for p in reads]
        (tmp / f"{name}.events").write_text("\n".join(lines) + "\n")
    (tmp / "analyse.txt").write_text(f"Detection   2/2 pairs = 100.00%\nContinuity  4/4 windows = {continuity}\n")


def check(tmp: Path):
    r = subprocess.run([sys.executable, str(SCRIPT), "check", str(tmp)], capture_output=True, text=True)
    return r.returncode, r.stdout, (tmp / "result.txt").read_text()


def test_passes_when_each_wearable_read_the_other_and_the_beacon(tmp_path):
    write_run(tmp_path, [BEACON, B], [A, BEACON])
    rc, out, result = check(tmp_path)
    assert rc == 0, out
    assert result == "PASS\n"
    assert "wearable A read wearable B's payload: 1 time" in out


def test_fails_when_one_wearable_never_read_the_other(tmp_path):
    # Two reads each, as a count would accept: but A's second read is the beacon again.
    write_run(tmp_path, [BEACON, BEACON], [A, BEACON])
    rc, out, result = check(tmp_path)
    assert rc == 1
    assert "wearable A never read wearable B's payload" in result


def test_a_payload_from_no_device_of_the_demo_does_not_count(tmp_path):
    write_run(tmp_path, [BEACON, "1000000000" + "ff" * 16], [A, BEACON])
    rc, out, _ = check(tmp_path)
    assert rc == 1
    assert "from no device of the demo" in out


def test_fails_below_99_percent_continuity(tmp_path):
    write_run(tmp_path, [BEACON, B], [A, BEACON], continuity="75.00%")
    rc, _, result = check(tmp_path)
    assert rc == 1
    assert "continuity 75.00% is below 99%" in result


def test_fails_when_a_period_s_payload_was_never_read(tmp_path):
    """The demo spans several payload periods: each wearable must read the other's payload of each
    period it spent at least 10 s in (a 3 s tail period may end before anyone reads it)."""
    write_run(tmp_path, [BEACON, B], [A, BEACON])
    b2, b3 = "1000000000bb" + "00" * 15, "1000000000cc" + "00" * 15
    (tmp_path / "wearable-b.payloads").write_text(f"{B} 20\n{b2} 25\n{b3} 3\n")
    rc, out, result = check(tmp_path)
    assert rc == 1
    assert "wearable A read wearable B's payload of 1 of 2 payload periods" in out
    assert f"wearable A never read wearable B's payload {b2}" in result
    write_run(tmp_path, [BEACON, B, b2], [A, BEACON])
    (tmp_path / "wearable-b.payloads").write_text(f"{B} 20\n{b2} 25\n{b3} 3\n")
    rc, out, _ = check(tmp_path)
    assert rc == 0, out
