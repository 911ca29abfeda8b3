"""`herald gatt`: our GATT client dumps a Bumble GATT server, and the dump matches what Bumble serves."""
import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from radio import is_zephyr

PEERS = Path(__file__).parent / "peers"
ADDRESS = "F0:F1:F2:F3:F4:F5"


def start_server(port):
    proc = subprocess.Popen([sys.executable, str(PEERS / "gatt_server.py"), f"serial:{port}", ADDRESS],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    layout = None
    for line in proc.stdout:
        if line.startswith("["):
            layout = json.loads(line)
        elif line.strip() == "advertising":
            return proc, layout
    raise AssertionError(f"Bumble GATT server did not start: {proc.stderr.read()}")


def expected_from(layout):
    """What a complete dump must say, derived from Bumble's own description of its database."""
    services = []
    for s in layout:
        chars = []
        for c in s["characteristics"]:
            chars.append({"uuid": c["uuid"], "declaration": c["declaration"], "handle": c["handle"],
                          "properties": c["properties"],
                          "descriptors": [(d["uuid"], d["handle"]) for d in c["descriptors"]]})
        services.append({"uuid": s["uuid"], "start": s["start"], "end": s["end"], "characteristics": chars})
    return services


def shape(dump):
    return [{"uuid": s["uuid"], "start": s["start"], "end": s["end"],
             "characteristics": [{"uuid": c["uuid"], "declaration": c["declaration"], "handle": c["handle"],
                                  "properties": c["properties"],
                                  "descriptors": [(d["uuid"], d["handle"]) for d in c["descriptors"]]}
                                 for c in s["characteristics"]]}
            for s in dump["services"]]


@pytest.mark.timeout(60)
def test_gatt_dump_matches_what_bumble_serves(controllers, herald_bin, controller_kind):
    c = controllers(2)
    server, layout = start_server(c.paths[1])
    try:
        t = time.time()
        r = subprocess.run([herald_bin, "gatt", "--transport", f"tty:{c.paths[0]}", "--connect", ADDRESS, "--json"],
                           capture_output=True, text=True, timeout=45)
        elapsed = time.time() - t
    finally:
        server.terminate()
        server.wait(5)
    assert r.returncode == 0, r.stderr
    dump = json.loads(r.stdout)
    print(f"\nherald gatt: {elapsed:.2f} s wall, timings (ms) {dump['timings']}")

    assert dump["address"] == ADDRESS
    assert dump.get("error") is None
    assert shape(dump) == expected_from(layout)
    # SIG-assigned UUIDs are named, as in the text dump (Generic Access, Device Name); others are not.
    names = {s["uuid"]: s.get("name") for s in dump["services"]}
    assert names["1800"] == "Generic Access" and names["9d2c0001-5b1a-4c6e-8f3d-2a7b6c5d4e01"] is None, names

    # Every static value Bumble holds for a readable characteristic came back whole: the 300-octet one
    # needed Read Blob past ATT_MTU, and the 69-octet user description too (descriptor long read).
    ours = {c["handle"]: c for s in dump["services"] for c in s["characteristics"]}
    compared = 0
    for s in layout:
        for ch in s["characteristics"]:
            mine = ours[ch["handle"]]
            if ch["properties"] & 0x02 and ch["readable"] and ch["value"] is not None:
                assert mine.get("value") == ch["value"], ch["uuid"]
                compared += 1
            for d in ch["descriptors"]:
                if d["value"] is not None:
                    got = [x for x in mine["descriptors"] if x["handle"] == d["handle"]][0]
                    assert got.get("value") == d["value"], (ch["uuid"], d["uuid"])
                    compared += 1
    assert compared >= 6
    long = ours[[c for s in layout for c in s["characteristics"] if c["uuid"].startswith("9d2c0002")][0]["handle"]]
    assert len(long["value"]) == 600
    # A value that needs encryption is reported with the server's error, not as a value.
    secret = ours[[c for s in layout for c in s["characteristics"] if c["uuid"].startswith("9d2c0006")][0]["handle"]]
    assert "value" not in secret or secret["value"] is None
    assert "ATT error 0x0f" in secret["error"] or "ATT error 0x05" in secret["error"]
    # The write-only characteristic was not read.
    write_only = ours[[c for s in layout for c in s["characteristics"] if c["uuid"].startswith("9d2c0004")][0]["handle"]]
    assert write_only.get("value") is None and write_only.get("error") is None
    assert dump["mtu"] > 23
    if is_zephyr(controller_kind):
        # Zephyr's controllers never start the Data Length Update themselves: this is our request.
        assert dump["dataLength"] == {"txOctets": 251, "rxOctets": 251}


@pytest.mark.timeout(60)
@pytest.mark.controllers("bumble", reason="the text rendering of the dump whose connection, discovery and reads "
                                          "test_gatt_dump_matches_what_bumble_serves checks on every controller")
def test_gatt_text_dump_lists_services_and_values(controllers, herald_bin):
    c = controllers(2)
    server, layout = start_server(c.paths[1])
    try:
        r = subprocess.run([herald_bin, "gatt", "--transport", f"tty:{c.paths[0]}", "--connect", f"{ADDRESS}/random"],
                           capture_output=True, text=True, timeout=45)
    finally:
        server.terminate()
        server.wait(5)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(ADDRESS)
    services = [line for line in lines if line.startswith("SERVICE ")]
    assert [line.split()[1] for line in services] == [s["uuid"] for s in layout]
    assert any("9d2c0002-5b1a-4c6e-8f3d-2a7b6c5d4e01" in line and "read" in line for line in lines)
    assert any("value (300):" in line for line in lines)
    # SIG-assigned numbers named, UTF-8 values shown as text beside the hex.
    i = next(i for i, line in enumerate(lines) if "CHARACTERISTIC 2a29 Manufacturer Name String" in line)
    assert lines[i + 1].strip() == 'value (14): ' + b"Bumble interop".hex() + '  "Bumble interop"', lines[i + 1]
    assert any("DESCRIPTOR 2901 Characteristic User Description" in line for line in lines)
    assert any('"short value"' in line for line in lines)
    assert not any("value (4): 01020304 " in line for line in lines)  # binary stays hex only


@pytest.mark.timeout(30)
def test_gatt_to_an_address_that_never_answers_times_out(controllers, herald_bin):
    c = controllers(2)
    t = time.time()
    r = subprocess.run([herald_bin, "gatt", "--transport", f"tty:{c.paths[0]}", "--connect", "C1:C2:C3:C4:C5:C6",
                        "--timeout", "2"], capture_output=True, text=True, timeout=25)
    elapsed = time.time() - t
    assert r.returncode == 5, r.stderr
    assert "C1:C2:C3:C4:C5:C6" in r.stderr and "no answer within 2 s" in r.stderr
    assert r.stdout == ""
    assert elapsed < 15


def test_gatt_rejects_a_malformed_address(herald_bin):
    r = subprocess.run([herald_bin, "gatt", "--transport", "tty:/dev/null", "--connect", "F0:F1:F2"],
                       capture_output=True, text=True, timeout=20)
    assert r.returncode != 0
    assert "AA:BB:CC:DD:EE:FF" in r.stderr


def start_silent_server(port, address, advertise=True):
    """silent_payload_server.py: discovery goes through, no read is ever answered; its lines (connected,
    read ignored, disconnected) are collected with the time they came."""
    proc = subprocess.Popen([sys.executable, str(PEERS / "silent_payload_server.py"), f"serial:{port}", address],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    threading.Thread(target=lambda: [lines.append((time.time(), line.strip())) for line in proc.stdout],
                     daemon=True).start()
    return proc, lines


def seen(lines, word, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        for t, line in list(lines):
            if line.startswith(word):
                return t
        time.sleep(0.05)
    return None


@pytest.mark.timeout(60)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_gatt_stopped_mid_dump_ends_its_link_before_it_exits(controllers, herald_bin, sig):
    """Stopped while a read is outstanding, `herald gatt` disconnects (Remote User Terminated) before it
    lets go of the controller, as every other command does: the peripheral hears of it at once, not at
    its supervision timeout (never, on Bumble's LocalLink) or the next Reset."""
    c = controllers(2)
    peer, lines = start_silent_server(c.paths[1], "F0:F1:F2:F3:F4:F7")
    herald = None
    try:
        assert seen(lines, "advertising", 20), lines
        herald = subprocess.Popen([herald_bin, "gatt", "--transport", f"tty:{c.paths[0]}", "--connect", "F0:F1:F2:F3:F4:F7"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert seen(lines, "read ignored", 20), lines
        stopped_at = time.time()
        herald.send_signal(sig)
        out, err = herald.communicate(timeout=15)
        exited_at = time.time()
        gone_at = seen(lines, "disconnected", 5)
        assert gone_at is not None, f"the peripheral still holds the link 5 s after herald gatt exited: {lines}; {err}"
        assert gone_at - stopped_at < 3, (gone_at - stopped_at, lines)
        assert gone_at <= exited_at + 0.5, "the link ended after herald let go of the controller"
        assert herald.returncode == 130, err
        assert "interrupted" in err
        # What was dumped before the stop is still printed (the services discovered).
        assert "SERVICE" in out
    finally:
        if herald is not None and herald.poll() is None:
            herald.kill()
        peer.kill()
        peer.wait(5)


@pytest.mark.timeout(60)
def test_gatt_stopped_while_connecting_leaves_no_attempt_behind(controllers, herald_bin):
    """Stopped before the peripheral answered, `herald gatt` cancels its LE Create Connection: the
    controller must not go on to connect, unattended, to a peripheral that starts advertising later."""
    c = controllers(2)
    herald = subprocess.Popen([herald_bin, "gatt", "--transport", f"tty:{c.paths[0]}", "--connect", "F0:F1:F2:F3:F4:F8",
                               "--timeout", "30"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peer = None
    try:
        time.sleep(3)  # brought up and initiating
        herald.send_signal(signal.SIGINT)
        _, err = herald.communicate(timeout=15)
        peer, lines = start_silent_server(c.paths[1], "F0:F1:F2:F3:F4:F8")
        assert seen(lines, "advertising", 20), lines
        assert seen(lines, "connected", 5) is None, f"a connection nobody asked for any more: {lines}"
        # Interrupted, not "no answer" (5): the peripheral was never given the time to answer.
        assert herald.returncode == 130, err
    finally:
        if herald.poll() is None:
            herald.kill()
        if peer is not None:
            peer.kill()
            peer.wait(5)
