"""Every `herald` command words a failure the same way, `herald <command>: <what> (<why>)` on one line of
standard error, and returns the status the README's table gives for that fault (no controller needed)."""
import os
import subprocess
from pathlib import Path

import pytest


def run(herald_bin, *args, cwd=None):
    r = subprocess.run([herald_bin, *args], capture_output=True, text=True, timeout=30, cwd=cwd)
    return r.returncode, r.stdout, r.stderr


@pytest.fixture
def work(tmp_path):
    (tmp_path / "emptyA").mkdir()
    (tmp_path / "emptyB").mkdir()
    (tmp_path / "bad.keys").write_text("garbage\nmore garbage\n")
    (tmp_path / "afile").write_text("not a log directory\n")
    # Readable by others and no key: what it is comes first, not advice to protect it.
    (tmp_path / "notakey").write_text("hello\n")
    (tmp_path / "notakey").chmod(0o644)
    return tmp_path


# (arguments, exit status, the start of the one stderr line, words the line must hold)
CASES = [
    (["scan", "--duration", "-5", "--transport", "tty:/nonexistent"], 2, "herald scan: --duration must be positive", []),
    (["wearable", "--duration", "-5", "--transport", "tty:/nonexistent"], 2, "herald wearable: --duration must be positive", []),
    (["scan", "--transport", "tty:/nonexistent"], 2, "herald scan: tty:/nonexistent", ["no such port"]),
    (["info", "--transport", "tty:/nonexistent"], 2, "herald info: tty:/nonexistent", ["no such port"]),
    (["analyse", "emptyA", "emptyB"], 2, "herald analyse: cannot read emptyA/contacts.csv", ["(no such file or directory)"]),
    (["match", "--matching-keys", "nokeys", "--logs", "emptyA"], 2, "herald match: cannot read matching keys file nokeys",
     ["(no such file or directory)"]),
    (["match", "--matching-keys", "bad.keys", "--logs", "emptyA"], 2, "herald match: bad.keys: not a matching keys file",
     ["line 1", "2 malformed lines"]),
    (["keys", "derive", "--secret-key-file", "nokey", "--time", "2026-11-24T10:00:00Z"], 2,
     "herald keys derive: cannot read secret key file nokey", ["(no such file or directory)"]),
    (["flash", "--hex", "nofile.hex"], 2, "herald flash: bad DFU package: cannot read nofile.hex", ["(no such file or directory)"]),
    (["gatt", "--connect", "zz"], 2, "herald gatt: --connect: expected", ["herald gatt --help"]),
    (["beacon", "--country", "1", "--state", "0", "--location-code", "-1"], 2, "herald beacon:", ["'-1'", "--location-code"]),
    (["wearable", "--log-dir", "/proc/herald-test/logs", "--transport", "tty:/nonexistent"], 2,
     "herald wearable: /proc/herald-test/logs: cannot create directory", ["(no such file or directory)"]),
    (["wearable", "--payload-period", "5", "--transport", "tty:/nonexistent"], 2,
     "herald wearable: --payload-period must be 10...360 seconds", ["got 5"]),
    (["keys", "derive", "--secret-key-file", "nokey", "--time", "2026-11-24T10:00:00Z", "--payload-period", "400"], 2,
     "herald keys derive: --payload-period must be 10...360 seconds", ["got 400"]),
    # 2,000 days of 240 periods of 20 s end 111 days after the epoch: the default one is long past.
    (["wearable", "--payload-period", "20", "--log-dir", "logs", "--transport", "tty:/nonexistent"], 2,
     "herald wearable: the key schedule from epoch 2026-01-01T00:00:00Z has run out", ["--payload-period 20", "4800 s"]),
    # Hex and numbers take digits only: UInt8("+f", radix: 16) would be 0x0F.
    (["beacon", "--country", "1", "--state", "0", "--location-code", "1", "--extended", "+f0f"], 2,
     "herald beacon: --extended must be an even number of hex digits", []),
    (["gatt", "--connect", "+1:22:33:44:55:66"], 2, "herald gatt: --connect: expected", []),
    (["flash", "--hex", "x.hex", "--sd-req", "0x+5"], 2, "herald flash:", ["'0x+5' is not a number"]),
    (["check", "--duration", "0", "--transport", "tty:/nonexistent"], 2,
     "herald check: --duration must be more than 0 and at most 3600 seconds", ["(got 0)"]),
    (["analyse", "afile", "emptyA"], 2, "herald analyse: afile is a file, not a log directory", []),
    (["analyse", "emptyA", "emptyA"], 2, "herald analyse: emptyA is given twice (one log directory per device)", []),
    (["analyse", "emptyA", "./emptyA/"], 2, "herald analyse: emptyA and ./emptyA/ are the same directory", []),
    (["keys", "derive", "--secret-key-file", "notakey", "--time", "2026-11-24T10:00:00Z"], 2,
     "herald keys derive: secret key file notakey has 6 bytes, expected 2048", []),
    (["frob"], 2, "herald: unexpected argument 'frob'", []),
    (["scan", "--frob"], 2, "herald scan: unknown option '--frob'", []),
]


@pytest.mark.parametrize("args,status,start,words", CASES, ids=[" ".join(c[0][:2]) for c in CASES])
def test_one_voice_and_one_status_per_fault(herald_bin, work, args, status, start, words):
    rc, out, err = run(herald_bin, *args, cwd=work)
    lines = [l for l in err.splitlines() if l.startswith("herald")]
    assert rc == status, (rc, err)
    assert len(lines) == 1, err
    assert lines[0].startswith(start), err
    for w in words:
        assert w in lines[0], err
    assert "Error:" not in err and "NSCocoaErrorDomain" not in err and "Domain=" not in err, err
    assert "file error" not in err and "chmod" not in err, err


def test_a_secret_key_path_that_cannot_be_created_says_why(herald_bin, work):
    env = dict(os.environ, HERALD_KEYS_DIR="/proc/herald-test/keys")
    r = subprocess.run([herald_bin, "wearable", "--log-dir", str(work / "logs"), "--transport", "tty:/nonexistent"],
                       capture_output=True, text=True, timeout=30, env=env)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("herald wearable: cannot create the key directory /proc/herald-test/keys ("), r.stderr
    assert "Domain=" not in r.stderr


def test_version_and_hidden_internal_commands(herald_bin):
    rc, out, _ = run(herald_bin, "--version")
    assert rc == 0 and out.startswith("herald ")
    assert run(herald_bin, "version")[1] == out
    rc, out, _ = run(herald_bin, "--help")
    assert rc == 0
    assert "bench-serve" not in out  # internal: Tools/bench-uart runs it
    assert "Exit status" in out


def test_old_option_spellings_still_work_and_are_not_listed(herald_bin, tmp_path):
    key = tmp_path / "k.key"
    assert run(herald_bin, "keys", "new", "--out", str(key))[0] == 0
    new = run(herald_bin, "keys", "derive", "--secret-key-file", str(key), "--day", "3", "--period", "1",
              "--country", "826", "--state", "2")
    old = run(herald_bin, "keys", "derive", "--secret-key-file", str(key), "--day", "3", "--period", "1",
              "--country-code", "826", "--state-code", "2")
    assert new[0] == 0 and new[1] == old[1]
    help_text = run(herald_bin, "keys", "derive", "--help")[1]
    assert "--country " in help_text and "--country-code" not in help_text
    help_text = run(herald_bin, "wearable", "--help")[1]
    assert "--json " in help_text and "--json-events" not in help_text


def test_flash_says_nothing_answered_when_no_bootloader_answers(herald_bin, tmp_path):
    # A pty nobody reads: the ping gets no answer at all.
    import pty
    master, slave = pty.openpty()
    hexfile = Path(__file__).resolve().parents[1] / "Fixtures" / "dfu" / "app.hex"
    try:
        r = subprocess.run([herald_bin, "flash", "--hex", str(hexfile), "--port", os.ttyname(slave), "--timeout", "200"],
                           capture_output=True, text=True, timeout=60)
    finally:
        os.close(master)
        os.close(slave)
    assert r.returncode == 5, (r.stdout, r.stderr)
    assert "nothing answered" in r.stdout and "stays in its DFU bootloader" not in r.stdout, r.stdout
    assert r.stderr.startswith("herald flash: "), r.stderr


def test_a_wearable_that_cannot_log_leaves_no_key_behind(herald_bin, tmp_path):
    env = dict(os.environ, HERALD_KEYS_DIR=str(tmp_path / "keys"))
    r = subprocess.run([herald_bin, "wearable", "--log-dir", "/proc/herald-test/logs", "--transport", "tty:/nonexistent"],
                       capture_output=True, text=True, timeout=30, env=env)
    assert r.returncode == 2, r.stderr
    assert r.stderr == "herald wearable: /proc/herald-test/logs: cannot create directory (no such file or directory)\n"
    assert not (tmp_path / "keys").exists()


# --- Damaged files: one line naming the file and the problem, exit 2, nothing written ----------------
ROOT = Path(__file__).resolve().parents[2]
DFU = ROOT / "Tests" / "Fixtures" / "dfu"
GARBAGE = bytes((i * 151 + 7) % 256 for i in range(700))  # not text, not a ZIP, no newline structure
CONTACTS_HEADER = "time,sensor,id,detect,read,measure,share,visit,detectHerald,delete,data\n"


def device_logs(directory: Path, own: str, peer: str):
    """A usable log directory: detection.csv and contacts.csv of a device that read `peer` and measured it."""
    directory.mkdir()
    (directory / "detection.csv").write_text(f"{directory.name},Linux,6.1,{own},{peer}\n")
    rows = [f"2026-11-21 10:00:00.000+0000,BLE,T1,1,,,,,,,", f"2026-11-21 10:00:00.000+0000,BLE,T1,,2,,,,,,{peer}"]
    rows += [f"2026-11-21 10:0{m}:{s:02d}.000+0000,BLE,T1,,,3,,,,,RSSI:-40.0" for m in range(3) for s in range(0, 60, 10)]
    (directory / "contacts.csv").write_text(CONTACTS_HEADER + "\n".join(rows) + "\n")


def zip_with_damaged_image(target: Path):
    """The nrfutil fixture with one byte of app.bin changed (its CRC-32 no longer matches)."""
    import zipfile
    with zipfile.ZipFile(DFU / "app.zip") as src, zipfile.ZipFile(target, "w") as out:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename.endswith(".bin"):
                data = data[:100] + bytes([data[100] ^ 0xFF]) + data[101:]
            out.writestr(info.filename, data)
    # Keep the original CRC in the directory: rewrite it so the reader sees the damage.
    raw = bytearray(target.read_bytes())
    with zipfile.ZipFile(DFU / "app.zip") as src:
        good = next(i for i in src.infolist() if i.filename.endswith(".bin")).CRC
    with zipfile.ZipFile(target) as z:
        bad = next(i for i in z.infolist() if i.filename.endswith(".bin")).CRC
    target.write_bytes(bytes(raw).replace(bad.to_bytes(4, "little"), good.to_bytes(4, "little")))


def damaged(tmp: Path, case: str):
    """Writes the damaged input of `case` in tmp; returns (arguments, the start of the error line, words)."""
    if case == "package-truncated":
        (tmp / "app.zip").write_bytes((DFU / "app.zip").read_bytes()[:300])
        return ["flash", "--package", "app.zip"], "herald flash: bad DFU package: app.zip: not a ZIP file", []
    if case == "package-garbage":
        (tmp / "app.zip").write_bytes(GARBAGE)
        return ["flash", "--package", "app.zip"], "herald flash: bad DFU package: app.zip: not a ZIP file", []
    if case == "package-damaged-image":
        zip_with_damaged_image(tmp / "app.zip")
        return ["flash", "--package", "app.zip"], "herald flash: bad DFU package: app.zip: corrupt ZIP: CRC-32 mismatch in app.bin", []
    if case == "hex-truncated":
        (tmp / "app.hex").write_text((DFU / "app.hex").read_text()[:3000])
        return ["flash", "--hex", "app.hex"], "herald flash: bad DFU package: app.hex: Intel HEX line 69", ["length"]
    if case == "hex-garbage":
        (tmp / "app.hex").write_bytes(GARBAGE)
        return ["flash", "--hex", "app.hex"], "herald flash: bad DFU package: app.hex: not text", []
    if case == "hex-without-end":
        (tmp / "app.hex").write_text("\n".join((DFU / "app.hex").read_text().splitlines()[:-1]) + "\n")
        return ["flash", "--hex", "app.hex"], "herald flash: bad DFU package: app.hex: Intel HEX has no end-of-file record", []
    if case.startswith("analyse"):
        device_logs(tmp / "a", "AADsmp", "AADTX3")
        device_logs(tmp / "b", "AADTX3", "AADsmp")
        name = {"analyse-contacts": "contacts.csv", "analyse-detection": "detection.csv"}[case]
        (tmp / "b" / name).write_bytes(GARBAGE)
        return ["analyse", "a", "b"], f"herald analyse: b/{name}: not a Herald", ["line 1"]
    if case.startswith("match"):
        device_logs(tmp / "logs", "AADsmp", "AADTX3")
        (tmp / "logs" / "payloads.csv").write_text("time,target,payload\n2026-11-21 10:00:00.000+0000,T1,1000\n")
        (tmp / "keys.csv").write_text("day,date,matchingKey\n0,2026-01-01," + "A" * 43 + "=\n")
        if case == "match-keys":
            (tmp / "keys.csv").write_bytes(GARBAGE)
            return ["match", "--matching-keys", "keys.csv", "--logs", "logs"], "herald match: keys.csv: not a matching keys file", []
        (tmp / "logs" / "payloads.csv").write_bytes(GARBAGE)
        return ["match", "--matching-keys", "keys.csv", "--logs", "logs"], "herald match: logs/payloads.csv: not a Herald payloads log", []
    if case.startswith("key"):
        key = tmp / "w.key"
        subprocess.run([HERALD[0], "keys", "new", "--out", str(key)], check=True, capture_output=True)
        if case == "key-truncated":
            key.write_bytes(key.read_bytes()[:1000])
            words = ["w.key has 1000 bytes, expected 2048"]
        elif case == "key-irk-truncated":
            Path(str(key) + ".irk").write_bytes(b"\x01\x02\x03")
            words = ["IRK file", "w.key.irk has 3 bytes, expected 16"]
        else:  # key-irk-missing
            Path(str(key) + ".irk").unlink()
            words = ["w.key.irk", "no such file or directory"]
        return (["wearable", "--secret-key-file", "w.key", "--log-dir", "logs", "--transport", "tty:/nonexistent"],
                "herald wearable: ", words)
    if case.startswith("board"):
        (tmp / "boards").mkdir()
        for board in (ROOT / "Boards").glob("*.json"):
            (tmp / "boards" / board.name).write_bytes(board.read_bytes())
        text = (ROOT / "Boards" / "nrf52dk.json").read_text()
        (tmp / "boards" / "nrf52dk.json").write_text(text[:len(text) // 2])
        role = ["wearable", "--log-dir", "logs"] if case == "board-wearable" else ["scan", "--duration", "1", "--log-dir", "logs"]
        transport = ["--board", "nrf52840dongle", "--transport", "tty:/nonexistent"] if case != "board-autodetect" else []
        return role + transport, f"herald {role[0]}: cannot read board profiles: ", ["nrf52dk.json", "not valid JSON"]
    raise ValueError(case)


HERALD = []
DAMAGED = ["package-truncated", "package-garbage", "package-damaged-image", "hex-truncated", "hex-garbage", "hex-without-end",
           "analyse-contacts", "analyse-detection", "match-keys", "match-payloads", "key-truncated", "key-irk-truncated",
           "key-irk-missing", "board-scan", "board-wearable", "board-autodetect"]


@pytest.mark.parametrize("case", DAMAGED)
def test_a_damaged_file_is_named_with_its_problem_and_nothing_is_written(herald_bin, tmp_path, case):
    HERALD[:] = [herald_bin]
    args, start, words = damaged(tmp_path, case)
    before = {p for p in tmp_path.rglob("*")}
    env = dict(os.environ, HERALD_KEYS_DIR=str(tmp_path / "keys-dir"), HERALD_BOARDS_DIR=str(tmp_path / "boards"))
    r = subprocess.run([herald_bin, *args], capture_output=True, text=True, timeout=30, cwd=tmp_path, env=env)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert r.returncode == 2, r.stderr
    assert len(lines) == 1 and lines[0].startswith(start), r.stderr
    for w in words:
        assert w in lines[0], r.stderr
    assert r.stdout == "", r.stdout
    assert {p for p in tmp_path.rglob("*")} == before, "the command wrote files"


def test_a_damaged_line_is_skipped_and_named_and_the_rest_analysed(herald_bin, tmp_path):
    """A log cut off mid-line (a device killed while writing) is still analysed: the damaged line is
    named with its file and line, everything else counts."""
    device_logs(tmp_path / "a", "AADsmp", "AADTX3")
    device_logs(tmp_path / "b", "AADTX3", "AADsmp")
    contacts = tmp_path / "b" / "contacts.csv"
    text = contacts.read_text()
    contacts.write_text(text + "2026-11-21 10:03:00.000+0000,BLE,T1,,,3,,")
    lines = text.count("\n") + 1
    r = subprocess.run([herald_bin, "analyse", "a", "b"], capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"malformed: b/contacts.csv:{lines}: expected 11 columns, found 8" in r.stderr, r.stderr
    assert "Continuity" in r.stdout and (tmp_path / "formal-summary.csv").exists()
