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
    (["match", "--matching-keys", "bad.keys", "--logs", "emptyA"], 1, "herald match: no usable matching keys in bad.keys",
     ["2 malformed"]),
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
