"""`herald scan` as a bench tester, and its Herald logs surviving a SIGKILL, against Bumble peers."""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from radio import FIXED_RSSI

PEERS = Path(__file__).parent / "peers"
ADDRESS = "F0:F1:F2:F3:F4:F5"


def start_advertiser(path, company="0xFFFA", data="cafe01020304", name="bench-peer"):
    """Bumble advertiser; FFFA with six bytes is a Herald pseudo device address."""
    proc = subprocess.Popen([sys.executable, str(PEERS / "advertiser.py"), f"serial:{path}", ADDRESS, company, data, name],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if "advertising" in line:
            return proc
    raise AssertionError(f"advertiser did not start: {''.join(seen)}")


def stop(proc):
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()


def read_terminal(master, before_each_read=None):
    """Everything a program writes to its pty until it closes it (EIO, or end of file)."""
    screen = b""
    while True:
        if before_each_read:
            before_each_read()
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the program closed the terminal
            break
        if not chunk:
            break
        screen += chunk
    return screen

def test_summary_json_and_html_report(herald_bin, controllers, controller_kind, tmp_path):
    c = controllers(2)
    peer = start_advertiser(c.paths[1])
    report = tmp_path / "bench.html"
    try:
        r = subprocess.run([herald_bin, "scan", "--transport", f"tty:{c.paths[0]}", "--duration", "4", "--summary-only",
                            "--json", "--report", str(report)], capture_output=True, text=True, timeout=60)
    finally:
        stop(peer)
    assert r.returncode == 0, r.stderr
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    assert len(lines) == 1, r.stdout  # --summary-only: the summary alone
    summary = json.loads(lines[0])["summary"]
    assert 3.5 <= summary["durationSeconds"] <= 6
    mine = [d for d in summary["devices"] if d["address"] == ADDRESS]
    assert len(mine) == 1, summary
    d = mine[0]
    assert d["kind"] == "android"  # a Herald pseudo device address is what Herald's Android app advertises
    assert d["pseudoAddress"] == "cafe01020304"
    assert d["name"] == "bench-peer"
    assert d["adverts"] >= 2
    # Bumble advertises about once a second; each simulated radio reports one fixed RSSI.
    assert 500 <= d["interval"]["mean"] <= 2000, d["interval"]
    assert d["interval"]["min"] <= d["interval"]["mean"] <= d["interval"]["max"]
    assert d["interval"]["count"] == d["adverts"] - 1
    rssi = FIXED_RSSI[controller_kind]
    assert d["rssi"]["mean"] == rssi and d["rssi"]["min"] == rssi and d["rssi"]["max"] == rssi
    assert d["rssi"]["count"] == d["adverts"] + d["scanResponses"]

    html = report.read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert "<svg" in html and "</svg>" in html
    assert html.count("<circle") == d["rssi"]["count"]
    assert ADDRESS in html
    # Self-contained: nothing is fetched (the only URL is the SVG namespace).
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<script" not in html and "<link" not in html


def test_human_summary_goes_to_stderr_after_reports(herald_bin, controllers, controller_kind):
    c = controllers(2)
    peer = start_advertiser(c.paths[1], company="0x0059", data="0102", name="not-herald")
    try:
        r = subprocess.run([herald_bin, "scan", "--transport", f"tty:{c.paths[0]}", "--duration", "3"],
                           capture_output=True, text=True, timeout=60)
    finally:
        stop(peer)
    assert r.returncode == 0, r.stderr
    assert ADDRESS in r.stdout  # per-report lines
    table = [l for l in r.stderr.splitlines() if ADDRESS in l]
    assert len(table) == 1, r.stderr
    assert table[0].split()[0] == "other"  # no Herald UUID, no 6-byte pseudo address
    assert str(FIXED_RSSI[controller_kind]) in table[0]


def test_sigkill_loses_at_most_one_second_of_contacts(herald_bin, controllers, controller_kind, tmp_path):
    """Reports printed more than a second before SIGKILL must all be in contacts.csv."""
    c = controllers(2)
    peer = start_advertiser(c.paths[1])
    logs = tmp_path / "logs"
    proc = subprocess.Popen([herald_bin, "scan", "--transport", f"tty:{c.paths[0]}", "--json", "--log-dir", str(logs)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    arrivals = []
    times = []

    def reader():
        for line in proc.stdout:
            if ADDRESS in line:
                arrivals.append(time.monotonic())
                times.append(json.loads(line)["time"])

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    try:
        deadline = time.monotonic() + 30
        while len(arrivals) < 6 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert len(arrivals) >= 6, f"only {len(arrivals)} reports: {proc.stderr.read() if proc.poll() is not None else ''}"
        time.sleep(0.3)
        killed_at = time.monotonic()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
        stop(peer)
    t.join(5)
    assert proc.returncode == -signal.SIGKILL
    # JSON times to the millisecond: adverts come tens of milliseconds apart.
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", t) for t in times), times[:3]
    older = [a for a in arrivals if a <= killed_at - 1.0]
    assert older, "no report older than a second before the kill"
    rows = (logs / "contacts.csv").read_text().splitlines()
    assert rows, "contacts.csv is empty: nothing was flushed before the kill"
    assert rows[0] == "time,sensor,id,detect,read,measure,share,visit,detectHerald,delete,data"
    measures = [r for r in rows[1:] if r.split(",")[5] == "3"]
    assert all(r.split(",")[2] == ADDRESS and r.split(",")[10].startswith(f"RSSI:{FIXED_RSSI[controller_kind]}.0") for r in measures)
    assert len(measures) >= len(older), f"{len(measures)} rows on disk, {len(older)} reports older than 1 s"
    assert sum(1 for r in rows[1:] if r.split(",")[3] == "1") == 1  # one detect for the one device


def test_analyse_cli_table_csv_and_malformed_lines(herald_bin, tmp_path):
    header = "time,sensor,id,detect,read,measure,share,visit,detectHerald,delete,data"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "detection.csv").write_text("A,Linux,1,AAAAAA\n")
    (tmp_path / "b" / "detection.csv").write_text("B,Linux,1,BBBBBB\n")
    (tmp_path / "a" / "contacts.csv").write_text("\n".join([
        header,
        "2026-11-21 10:00:00.000+0000,BLE,T1,,2,,,,,,BBBBBB",
        "2026-11-21 10:00:40.000+0000,BLE,T1,,,3,,,,,RSSI:-60.0",
        "broken",
        "2026-11-21 10:02:00.000+0000,BLE,T1,,,3,,,,,RSSI:-60.0", ""]))
    (tmp_path / "b" / "contacts.csv").write_text("\n".join([
        header,
        "2026-11-21 10:00:00.000+0000,BLE,T2,,,,4,,,,AAAAAA",
        "2026-11-21 10:02:00.000+0000,BLE,T2,1,,,,,,,", ""]))
    r = subprocess.run([herald_bin, "analyse", str(tmp_path / "a"), str(tmp_path / "b")],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert f"{tmp_path / 'a' / 'contacts.csv'}:4:" in r.stderr
    assert "Detection   2/2 pairs = 100.00%" in r.stdout
    assert "Continuity  3/8 windows = 37.50%" in r.stdout
    summary = (tmp_path / "formal-summary.csv").read_text().splitlines()
    assert summary[1].startswith("2,2,2,100.00,4,8,3,37.50,")
    assert len((tmp_path / "formal-continuity.csv").read_text().splitlines()) == 3
    # One directory is not a test.
    r = subprocess.run([herald_bin, "analyse", str(tmp_path / "a")], capture_output=True, text=True, timeout=30)
    assert r.returncode != 0


def test_read_payloads_over_gatt_into_summary_and_logs(herald_bin, controllers, tmp_path):
    c = controllers(2)
    payload = "10033a0001" + "ab" * 30  # 35 octets: longer than one ATT_MTU 23 read, so Read Blob runs too
    peer = subprocess.Popen([sys.executable, str(PEERS / "payload_server.py"), f"serial:{c.paths[1]}", ADDRESS, payload],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in peer.stdout:
        if "advertising" in line:
            break
    logs = tmp_path / "logs"
    try:
        r = subprocess.run([herald_bin, "scan", "--transport", f"tty:{c.paths[0]}", "--duration", "6", "--summary-only",
                            "--json", "--read-payloads", "--log-dir", str(logs)], capture_output=True, text=True, timeout=60)
    finally:
        stop(peer)
    assert r.returncode == 0, r.stderr
    d = [x for x in json.loads(r.stdout)["summary"]["devices"] if x["address"] == ADDRESS][0]
    assert d["kind"] == "herald-wearable"  # the Simple payload (0x10) says so
    assert d["payload"] == payload, d
    assert d["payloadText"].startswith("Simple 826/1 "), d
    assert d["payloadShortName"] == "AAGrq6"
    assert "payloadError" not in d or d["payloadError"] is None
    # Scanning resumed after the read: adverts keep arriving after the connection.
    assert d["lastSeen"] > 3
    rows = (logs / "payloads.csv").read_text().splitlines()
    assert rows[0] == "time,target,payload" and rows[1].endswith(f",{ADDRESS},{payload}")
    assert any(r.split(",")[4] == "2" and r.endswith(",AAGrq6") for r in (logs / "contacts.csv").read_text().splitlines())
    assert (logs / "detection.csv").read_text().rstrip().endswith(",AAGrq6")


@pytest.mark.controllers("bumble", reason="the terminal rendering of what test_summary_json_and_html_report and "
                                          "test_human_summary_goes_to_stderr_after_reports check on every controller")
def test_live_table_in_a_terminal(herald_bin, controllers, tmp_path):
    """On a terminal `herald scan` redraws a table in place: read the screen a real pty shows."""
    import pty
    c = controllers(2)
    beacon = subprocess.Popen([herald_bin, "beacon", "--transport", f"tty:{c.paths[1]}", "--country", "826", "--state", "0",
                               "--location-code", "12345", "--json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        ready = json.loads(beacon.stdout.readline())
        master, slave = pty.openpty()
        env = dict(os.environ, TERM="xterm-256color")
        env.pop("NO_COLOR", None)
        scan = subprocess.Popen([herald_bin, "scan", "--transport", f"tty:{c.paths[0]}", "--duration", "6", "--read-payloads"],
                                stdout=slave, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
        os.close(slave)
        screen = read_terminal(master)
        scan.wait(timeout=60)
        os.close(master)
    finally:
        stop(beacon)
    assert scan.returncode == 0, scan.stderr.read()
    text = screen.decode()
    frames = text.split("\x1b[H")
    assert len(frames) >= 4, text[:500]  # redrawn about once a second in place, not scrolled
    last = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", frames[-1]).splitlines()
    assert last[0].startswith("herald scan") and "device(s)" in last[0], last
    assert last[1].split()[:3] == ["ADDRESS", "KIND", "PAYLOAD"], last
    row = [l for l in last if l.startswith(ready["identityAddress"])]
    assert row, last
    assert "venue beacon" in row[0] and "venue 826/0 location 12345" in row[0], row
    # RSSI now and its mean (Bumble's radio says -50 dBm, Zephyr's simulated one -35), then the interval.
    assert re.search(r"  -\d+ +-\d+\.\d +\d+ +\d+\.\d s ago", row[0]), row
    assert "\x1b[36m" + ready["identityAddress"] in text  # the beacon's row in colour (cyan)
    # No per-report lines mixed into the table.
    assert "connectable" not in text and "flags 0x" not in text


@pytest.mark.controllers("bumble", reason="the path is refused before the controller is used")
def test_report_path_checked_before_the_scan(herald_bin, controllers):
    c = controllers(2)
    start = time.monotonic()
    r = subprocess.run([herald_bin, "scan", "--transport", f"tty:{c.paths[0]}", "--duration", "30",
                        "--report", "/proc/herald-no/report.html"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("herald scan: cannot write /proc/herald-no/report.html ("), r.stderr
    assert time.monotonic() - start < 10  # refused at once, not after the 30 s scan


def test_beacon_and_scan_agree_on_the_apps_byte_order(herald_bin, controllers):
    """`herald beacon --byte-order apps` writes the codes little-endian, as the reference apps do
    (iOS VenueDiary reads 30 3a03 0400 40e20100 as 826/4/123456); `herald scan --byte-order apps`
    decodes them back and says which order it used."""
    c = controllers(2)
    beacon = subprocess.Popen([herald_bin, "beacon", "--transport", f"tty:{c.paths[1]}", "--country", "826", "--state", "4",
                               "--location-code", "123456", "--byte-order", "apps", "--json-events", "--duration", "30"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in beacon.stdout:
            if '"ready"' in line:
                break
        # The beacon says what it serves in the order it was told to write.
        assert json.loads(line)["decoded"] == "venue 826/4 location 123456", line
        r = subprocess.run([herald_bin, "scan", "--transport", f"tty:{c.paths[0]}", "--duration", "6", "--summary-only",
                            "--json", "--read-payloads", "--byte-order", "apps"], capture_output=True, text=True, timeout=60)
    finally:
        stop(beacon)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)["summary"]
    assert summary["byteOrder"] == "apps"
    d = [x for x in summary["devices"] if x.get("payload")][0]
    assert d["payload"].startswith("303a03040040e20100"), d
    assert d["payloadFields"] == {"type": "venue", "protocolAndVersion": 0x30, "country": 826, "state": 4,
                                  "locationCode": 123456, "byteOrder": "apps"}
    # Every rendering follows --byte-order: before, the text said "venue 14851/1024 location 1088553216".
    assert d["payloadText"] == "venue 826/4 location 123456", d


def test_scan_shows_and_counts_apple_devices_the_reference_filter_ignores(herald_bin, controllers):
    """An Apple TV's Nearby Info message (action 0x14) matches the reference apps' device filter:
    scan shows it as an Apple device (kind apple-other), counts it as ignored, and so does --stats."""
    c = controllers(2)
    peer = start_advertiser(c.paths[1], company="0x004C", data="100508141bba69", name="apple-tv")
    try:
        r = subprocess.run([herald_bin, "scan", "--transport", f"tty:{c.paths[0]}", "--duration", "4", "--summary-only",
                            "--json", "--stats"], capture_output=True, text=True, timeout=60)
    finally:
        stop(peer)
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)["summary"]
    d = [x for x in summary["devices"] if x["address"] == ADDRESS][0]
    assert d["kind"] == "apple-other", d
    assert summary["ignoredAppleDevices"] == 1
    stats = json.loads(r.stderr.split("herald-stats: ", 1)[1].splitlines()[0])
    assert stats["ignoredAppleDevices"] == 1


def test_live_table_filters_sort_keys_sparkline_and_csv(herald_bin, controllers, controller_kind, tmp_path):
    """In a real pty: `--kind venue-beacon` keeps only the beacon (a plain advertiser is heard and left
    out), the `a` key switches the sort to address, each row has an RSSI sparkline, and `--csv` has one
    row per report shown."""
    import pty
    c = controllers(3)
    beacon = subprocess.Popen([herald_bin, "beacon", "--transport", f"tty:{c.paths[1]}", "--country", "826", "--state", "0",
                               "--location-code", "12345", "--json"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    plain = start_advertiser(c.paths[2], company="0x0059", data="0102", name="not-herald")
    csv_path = tmp_path / "reports.csv"
    try:
        ready = json.loads(beacon.stdout.readline())
        master, slave = pty.openpty()
        env = dict(os.environ, TERM="dumb")
        scan = subprocess.Popen([herald_bin, "scan", "--transport", f"tty:{c.paths[0]}", "--duration", "7", "--read-payloads",
                                 "--kind", "venue-beacon", "--csv", str(csv_path)],
                                stdout=slave, stderr=subprocess.PIPE, stdin=slave, env=env)
        os.close(slave)
        screen, sent = b"", False
        start = time.monotonic()

        def press_a_after_3_s():
            nonlocal sent
            if not sent and time.monotonic() - start > 3:
                os.write(master, b"a")  # sort by address
                sent = True

        screen += read_terminal(master, before_each_read=press_a_after_3_s)
        scan.wait(timeout=60)
        os.close(master)
    finally:
        stop(beacon)
        stop(plain)
    assert scan.returncode == 0, scan.stderr.read()
    frames = screen.decode().split("\x1b[H")
    first, last = (re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", f).splitlines() for f in (frames[1], frames[-1]))
    assert "sorted by RSSI" in first[0] and "sorted by address" in last[0], (first[0], last[0])
    assert "RSSI TREND" in last[1]
    rows = [l for l in last[2:] if re.match(r"[0-9A-F]{2}(:[0-9A-F]{2}){5}", l)]
    assert [r.split()[0] for r in rows] == [ready["identityAddress"]], last  # the plain advertiser filtered out
    assert re.search(r"[▁▂▃▄▅▆▇█]{3,}", rows[0]), rows[0]
    lines = csv_path.read_text().splitlines()
    assert lines[0] == "time,address,addressType,kind,rssi,type,payload,heraldPayload"
    assert len(lines) > 3 and all(l.split(",")[1] == ready["identityAddress"] for l in lines[1:]), lines[:5]
    assert lines[-1].split(",")[3] == "venue-beacon" and "venue 826/0 location 12345" in lines[-1]
    assert str(FIXED_RSSI[controller_kind]) == lines[-1].split(",")[4]
