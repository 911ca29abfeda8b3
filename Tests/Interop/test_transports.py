"""`herald ports`: the CLI's port listing, as scripts and the flasher consume it.

USB board matching needs real hardware; here we check the output contract and error reporting on
whatever ports this machine has (often just /dev/ttyS0, sometimes none).
"""
import json
import subprocess

DONGLE = {
    "name": "nrf52840dongle", "title": "Nordic nRF52840 Dongle (PCA10059)", "soc": "nRF52840",
    "flashKB": 1024, "ramKB": 256, "hciLink": "usb-cdc-acm",
    "usb": {"application": "2FE3:0100", "bootloader": "1915:521F"},
    "serial": {"baud": 1000000, "flowControl": "rtscts"},
    "zephyrBoard": "nrf52840dongle/nrf52840",
    "flash": {"method": "nordic-dfu", "notes": "side button enters the bootloader"},
    "kconfig": ["CONFIG_BT_BUF_ACL_TX_SIZE=251"],
}

KEYS = {"path", "type", "description", "usb", "manufacturer", "product", "serialNumber", "board", "role"}


def run(herald_bin, *args):
    return subprocess.run([herald_bin, *args], capture_output=True, text=True, timeout=30)


def boards_dir(tmp_path, board=DONGLE):
    d = tmp_path / "Boards"
    d.mkdir()
    (d / "nrf52840dongle.json").write_text(json.dumps(board))
    return d


def test_ports_json_is_an_array_with_every_key(herald_bin, tmp_path):
    out = run(herald_bin, "ports", "--json", "--boards-dir", str(boards_dir(tmp_path)))
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    ports = json.loads(out.stdout)
    assert isinstance(ports, list)
    assert [p["path"] for p in ports] == sorted(p["path"] for p in ports)
    for port in ports:
        assert set(port) == KEYS
        assert port["path"].startswith("/")
        assert port["type"] in {"native", "usb", "bluetooth", "unknown"}
        assert port["role"] in {None, "application", "bootloader"}
        if port["usb"] is not None:
            vid, pid = port["usb"].split(":")
            assert len(vid) == len(pid) == 4 and int(vid, 16) >= 0 and int(pid, 16) >= 0


def test_ports_table_matches_json(herald_bin, tmp_path):
    d = str(boards_dir(tmp_path))
    table = run(herald_bin, "ports", "--boards-dir", d)
    listed = json.loads(run(herald_bin, "ports", "--json", "--boards-dir", d).stdout)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.strip().splitlines()
    if not listed:
        assert lines == ["no serial ports found"]
        return
    assert lines[0].split() == ["PORT", "TYPE", "USB", "ID", "BOARD", "ROLE", "PRODUCT", "SERIAL"]
    assert [line.split()[0] for line in lines[1:]] == [p["path"] for p in listed]


def test_broken_board_file_is_reported_with_file_and_key(herald_bin, tmp_path):
    broken = dict(DONGLE, usb={"application": "2FE3-0100"})
    out = run(herald_bin, "ports", "--json", "--boards-dir", str(boards_dir(tmp_path, broken)))
    # Listing ports still works; the warning names the file and the bad key.
    assert out.returncode == 0
    assert isinstance(json.loads(out.stdout), list)
    assert "nrf52840dongle.json" in out.stderr and "usb.application" in out.stderr


def test_boards_dir_from_environment(herald_bin, tmp_path):
    missing = tmp_path / "nowhere"
    out = subprocess.run([herald_bin, "ports"], capture_output=True, text=True, timeout=30,
                         env={"HERALD_BOARDS_DIR": str(missing), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0
    assert str(missing) in out.stderr and "does not exist" in out.stderr
