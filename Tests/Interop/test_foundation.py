"""Foundation interop: our `herald` CLI against Bumble virtual controllers on ptys."""
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import snoop
from radio import is_zephyr

PEERS = Path(__file__).parent / "peers"


def run_herald(herald_bin, *args, timeout=60):
    return subprocess.run([herald_bin, *args], capture_output=True, text=True, timeout=timeout)


def start_peer(script, *args):
    proc = subprocess.Popen([sys.executable, str(PEERS / script), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if "advertising" in line or "ready" in line:
            return proc
    raise AssertionError(f"peer did not start: {''.join(seen)}")


@pytest.mark.controllers("bumble", "zephyr", "zephyr25", reason="the bring-up and vendor information of both Zephyr versions")
def test_info_reports_a_static_random_address(herald_bin, controllers, controller_kind):
    c = controllers(1)
    r = run_herald(herald_bin, "info", "--transport", f"tty:{c.paths[0]}", "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    # Neither controller has a public address: Bumble's reports BD_ADDR 00:00:00:00:00:00, and the
    # simulated nRF52 has no factory static address (Zephyr's Read Static Addresses returns none;
    # a real nRF52 returns its FICR address). The host generates a static random address (two top
    # bits set).
    assert info["addressType"] == "random"
    assert "generated" in info["addressSource"]
    assert int(info["address"].split(":")[0], 16) & 0xC0 == 0xC0
    assert info["aclBuffers"]["length"] > 0 and info["aclBuffers"]["count"] > 0
    if is_zephyr(controller_kind):
        # Zephyr's link layer: The Linux Foundation's company id, its vendor version (Zephyr's Read
        # Version Info decoded: Nordic's platform and nRF52 variant, a major.minor version of the
        # link layer), and the hci_uart build's 7 x 251-octet buffers and 251-octet data length.
        assert info["manufacturer"]["id"] == 0x05F1
        zephyr = info["zephyr"]
        assert (zephyr["hardwarePlatform"], zephyr["hardwareVariant"]) == (0x0002, 0x0002), zephyr
        assert re.fullmatch(r"[1-9][0-9]*\.[0-9]+", zephyr["firmwareVersion"]), zephyr
        assert (info["aclBuffers"]["length"], info["aclBuffers"]["count"]) == (251, 7)
        assert info["maximumDataLength"]["maxTxOctets"] == 251
    else:
        assert info["manufacturer"]["id"] == 0xFFFF


def test_info_on_missing_port_exits_2_naming_it(herald_bin):
    r = run_herald(herald_bin, "info", "--transport", "tty:/dev/does-not-exist-herald")
    assert r.returncode == 2
    assert "/dev/does-not-exist-herald" in r.stderr


def test_info_on_silent_controller_exits_3(herald_bin):
    # A pty with nobody behind it: nothing ever answers HCI Reset.
    import pty
    master, slave = pty.openpty()
    path = os.ttyname(slave)
    try:
        r = run_herald(herald_bin, "info", "--transport", f"tty:{path}")
        assert r.returncode == 3, r.stderr
        assert "no HCI response on" in r.stderr and "resets" in r.stderr and "hci_uart" in r.stderr
    finally:
        os.close(master)
        os.close(slave)


def test_scan_sees_bumble_manufacturer_data_and_capture_is_clean(herald_bin, controllers, controller_kind):
    c = controllers(2)
    peer = start_peer("advertiser.py", f"serial:{c.paths[1]}", "F0:F1:F2:F3:F4:F5", "0xFFFA", "cafe0102030405", "herald-peer")
    snoop_file = Path(tempfile.mkdtemp()) / "scan.btsnoop"
    try:
        r = run_herald(herald_bin, "scan", "--transport", f"tty:{c.paths[0]}", "--duration", "4",
                       "--json", "--btsnoop", str(snoop_file))
    finally:
        peer.terminate()
        peer.wait(5)
    assert r.returncode == 0, r.stderr
    reports = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    mine = [x for x in reports if x["address"] == "F0:F1:F2:F3:F4:F5"]
    assert mine, f"no report from the Bumble advertiser among {len(reports)}"
    assert any(m["companyId"] == 0xFFFA and m["data"] == "cafe0102030405"
               for x in mine for m in x["manufacturerData"])
    assert any(x.get("name") == "herald-peer" for x in mine)
    assert all(x["rssi"] is not None for x in mine)
    # Every command was accepted, on every controller (Zephyr 2.5 refuses some that 3.0 accepts).
    assert snoop.refused(snoop_file, controller_kind) == [], snoop_file

    # The capture opens in tshark with no malformed packets.
    tshark = shutil.which("tshark")
    if tshark is None:
        pytest.skip("tshark not installed")
    t = subprocess.run([tshark, "-r", str(snoop_file)], capture_output=True, text=True, timeout=60)
    assert t.returncode == 0, t.stderr
    assert "Malformed" not in t.stdout
    # One frame per record we wrote, and tshark reads our LE Set Scan Enable commands (Core 5.4 Vol 4
    # Part E 7.8.11) as we wrote them: the scan switched on, and off at the end.
    records = list(snoop.packets(snoop_file))
    assert len(t.stdout.splitlines()) == len(records), t.stdout
    ours = [f"0x{p[4]:02x}" for received, p in records
            if not received and len(p) >= 5 and p[0] == 0x01 and p[1] | p[2] << 8 == 0x200C]
    e = subprocess.run([tshark, "-r", str(snoop_file), "-Y", "bthci_cmd.opcode == 0x200c", "-T", "fields",
                        "-e", "bthci_cmd.le_scan_enable"], capture_output=True, text=True, timeout=60)
    assert e.returncode == 0, e.stderr
    assert e.stdout.split() == ours, (e.stdout, ours)
    assert ours[0] == "0x01" and ours[-1] == "0x00", ours
