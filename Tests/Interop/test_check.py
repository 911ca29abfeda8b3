"""`herald check` on real devices: our beacon and wearable pass every rule they can show (on Bumble's and
Zephyr's controllers), and Bumble peers built to break one rule each fail exactly that rule."""
import json
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from radio import open_radio

PEERS = Path(__file__).parent / "peers"
sys.path.insert(0, str(PEERS))
from check_peer import FAULTS  # noqa: E402

# A premises name long enough that the venue payload (35 octets) needs Read Blob at ATT_MTU 23.
PREMISES = "Check Bench Diner".encode().hex()
EXTENDED = "10" + f"{len(PREMISES) // 2:02x}" + PREMISES


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def check(herald_bin, path, *args, timeout=120):
    """Runs `herald check --json`; returns (exit status, {rule: verdict}, stderr)."""
    r = subprocess.run([herald_bin, "check", "--transport", f"tty:{path}", "--json", *args],
                       capture_output=True, text=True, timeout=timeout)
    verdicts = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    by_rule = {v["rule"]: v for v in verdicts}
    assert len(by_rule) == len(verdicts), r.stdout
    return r.returncode, by_rule, r.stderr


def identity(proc, role):
    """The identity address a `herald beacon`/`wearable` prints when its controller is ready."""
    deadline = time.monotonic() + 60
    seen = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        m = re.search(rf"{role}: controller ready \(identity ([0-9A-F:]{{17}})\)", line)
        if m:
            return m.group(1)
    raise AssertionError(f"{role} did not start: {''.join(seen)}")


@pytest.fixture(scope="module", params=["bumble", "zephyr"])
def own_devices(request, herald_bin, tmp_path_factory):
    """Our venue beacon and wearable on one radio, each checked with --active from a third controller:
    the beacon by address, then (the beacon stopped) the wearable as the first Herald device heard."""
    kind = request.param
    tmp = tmp_path_factory.mktemp(f"check-{kind}")
    radio = open_radio(kind, 3)
    procs = []
    try:
        beacon = subprocess.Popen([herald_bin, "beacon", "--transport", f"tty:{radio.paths[0]}", "--country", "826",
                                   "--state", "4", "--location-code", "123456", "--extended", EXTENDED, "--interval-ms", "200"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(beacon)
        address = identity(beacon, "beacon")
        report = tmp / "beacon.html"
        beacon_result = check(herald_bin, radio.paths[2], "--address", address, "--duration", "4", "--active",
                              "--report", str(report))
        stop(beacon)
        wearable = subprocess.Popen([herald_bin, "wearable", "--transport", f"tty:{radio.paths[1]}", "--log-dir", str(tmp / "w"),
                                     "--country", "826", "--state", "4"],
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs.append(wearable)
        identity(wearable, "wearable")
        time.sleep(1)  # the wearable's advertising, and no one else's
        wearable_result = check(herald_bin, radio.paths[2], "--duration", "4", "--active")
        yield {"kind": kind, "beacon": beacon_result, "beacon_report": report, "wearable": wearable_result}
    finally:
        for p in procs:
            stop(p)
        radio.close()


def assert_passes(result, may_skip):
    status, rules, stderr = result
    assert status == 0, stderr
    bad = {r: (v["status"], v["evidence"]) for r, v in rules.items() if v["status"] in ("fail", "warn")}
    assert not bad, bad
    skipped = {r for r, v in rules.items() if v["status"] == "skip"}
    assert skipped == may_skip, {r: rules[r]["evidence"] for r in skipped}
    assert all(v["statement"] and v["source"] and v["evidence"] for v in rules.values())


def test_our_beacon_passes_every_rule(own_devices):
    # A venue payload is fixed: whether it changes at the period boundary does not apply.
    assert_passes(own_devices["beacon"], {"PAY-6"})
    rules = own_devices["beacon"][1]
    assert "Read Blob" in rules["GATT-4"]["evidence"]  # 36 octets at ATT_MTU 23
    assert "country 826, state 4, location 123456" in rules["PAY-3"]["evidence"]
    assert "Check Bench Diner" in rules["PAY-4"]["evidence"]
    html = own_devices["beacon_report"].read_text()
    assert html.startswith("<!DOCTYPE html>") and html.count("<tr class=") == len(rules) and "<svg" in html


def test_our_wearable_passes_every_rule(own_devices):
    # 21 octets with no extended data: nothing for Read Blob or the extended data rule; a 4 s run
    # seldom spans a 360 s payload period boundary.
    status, rules, _ = own_devices["wearable"]
    may_skip = {"GATT-4", "PAY-4", "PAY-6"}
    assert_passes(own_devices["wearable"], may_skip)
    assert rules["PAY-1"]["evidence"].startswith("Simple (0x10)")


@pytest.fixture(scope="module")
def broken_peers(herald_bin):
    """One Bumble radio: a conformant peer and one per fault, checked four at a time from four controllers."""
    faults = list(FAULTS)
    radio = open_radio("bumble", len(faults) + 4)
    peers = {}
    try:
        for i, fault in enumerate(faults):
            address = f"F0:00:00:00:{i // 256:02X}:{i % 256 + 1:02X}"
            p = subprocess.Popen([sys.executable, str(PEERS / "check_peer.py"), f"serial:{radio.paths[i]}", address, fault],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            peers[fault] = (p, address)
        for fault, (p, _) in peers.items():
            line = p.stdout.readline()
            assert "advertising" in line, f"{fault}: {line}{p.stdout.read() if p.poll() is not None else ''}"
        centrals = radio.paths[len(faults):]

        def run(job):
            n, fault = job
            duration = "7" if fault == "slow-adverts" else "4"  # three adverts 2.8 s apart
            return fault, check(herald_bin, centrals[n % 4], "--address", peers[fault][1], "--duration", duration, "--active")

        results = {}
        # Four workers, each on its own controller: a controller serves one check at a time.
        batches = [[(n, f) for n, f in enumerate(faults) if n % 4 == w] for w in range(4)]
        with ThreadPoolExecutor(4) as pool:
            for batch_results in pool.map(lambda batch: [run(job) for job in batch], batches):
                results.update(dict(batch_results))
        yield results
    finally:
        for p, _ in peers.values():
            stop(p)
        radio.close()


@pytest.mark.parametrize("fault", list(FAULTS))
def test_peer_fails_exactly_its_rule(broken_peers, fault):
    status, rules, stderr = broken_peers[fault]
    failed = sorted(r for r, v in rules.items() if v["status"] == "fail")
    warned = sorted(r for r, v in rules.items() if v["status"] == "warn")
    expected = [FAULTS[fault]] if FAULTS[fault] else []
    assert failed == expected, {r: rules[r]["evidence"] for r in failed}
    assert not warned, {r: rules[r]["evidence"] for r in warned}
    assert status == (1 if expected else 0), stderr
    if expected:
        assert f"failed {expected[0]}" in stderr
