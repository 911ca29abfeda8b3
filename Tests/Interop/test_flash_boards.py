"""Board profiles (Boards/*.json) and Tools/build-controller: schema, and the exact west command."""
import json
import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOARDS = sorted((ROOT / "Boards").glob("*.json"))
TOOL = ROOT / "Tools" / "build-controller"
USB_ID = re.compile(r"^[0-9A-F]{4}:[0-9A-F]{4}$")


def load(path):
    with open(path) as f:
        return json.load(f)


def test_every_board_follows_the_schema():
    assert len(BOARDS) >= 6
    for path in BOARDS:
        b = load(path)
        assert set(b) == {"name", "title", "soc", "flashKB", "ramKB", "hciLink", "usb", "serial",
                          "zephyrBoard", "flash", "kconfig"}, path.name
        assert b["name"] == path.stem
        assert b["hciLink"] in ("usb-cdc-acm", "uart")
        assert isinstance(b["flashKB"], int) and isinstance(b["ramKB"], int)
        for key in ("application", "bootloader"):
            v = b["usb"][key]
            assert v is None or USB_ID.match(v), (path.name, key, v)
        assert isinstance(b["serial"]["baud"], int)
        assert b["serial"]["flowControl"] in ("rtscts", "none")
        assert b["flash"]["method"] in ("nordic-dfu", "jlink", "uf2") and b["flash"]["notes"]
        # UARTs through an interface MCU need RTS/CTS for sustained HCI traffic.
        if b["hciLink"] == "uart":
            assert b["serial"]["flowControl"] == "rtscts", path.name
        kconfig = dict(line.split("=", 1) for line in b["kconfig"])
        assert kconfig["CONFIG_BT_BUF_ACL_TX_SIZE"] == "251"
        assert kconfig["CONFIG_BT_BUF_ACL_RX_SIZE"] == "255"
        assert kconfig["CONFIG_BT_CTLR_DATA_LENGTH_MAX"] == "251"
        assert kconfig["CONFIG_BT_BUF_CMD_TX_SIZE"] == "255"
        assert kconfig["CONFIG_BT_BUF_EVT_RX_SIZE"] == "255"


def test_dongle_profile_names_its_bootloader():
    b = load(ROOT / "Boards" / "nrf52840dongle.json")
    assert b["usb"] == {"application": "2FE3:0100", "bootloader": "1915:521F"}
    assert b["zephyrBoard"] == "nrf52840dongle/nrf52840"
    assert b["flash"]["method"] == "nordic-dfu"
    assert load(ROOT / "Boards" / "nrf5340dk.json")["zephyrBoard"].endswith("/cpunet")


def run_tool(*args, cwd):
    env = dict(os.environ, ZEPHYR_BASE="")
    return subprocess.run([str(TOOL), *args], cwd=cwd, capture_output=True, text=True, env=env)


def test_unknown_board_lists_the_known_ones(tmp_path):
    r = run_tool("nrf99999", cwd=tmp_path)
    assert r.returncode == 2
    assert "unknown board 'nrf99999'" in r.stderr
    for path in BOARDS:
        assert path.stem in r.stderr


def test_dry_run_prints_the_west_command_and_fragment(tmp_path):
    r = run_tool("nrf52840dongle", "--dry-run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    build = tmp_path / "build-herald-nrf52840dongle"
    fragment = tmp_path / "build-herald-nrf52840dongle-config" / "herald-nrf52840dongle.conf"
    assert (f"command:   west build -p auto -b nrf52840dongle/nrf52840 -d {build} samples/bluetooth/hci_uart "
            f"-- -DEXTRA_CONF_FILE={fragment}") in r.stdout
    assert "CONFIG_BT_BUF_ACL_TX_SIZE=251" in fragment.read_text()
    assert f"{build}/zephyr/zephyr.hex" in r.stdout
    assert f"herald flash --hex {build}/zephyr/zephyr.hex" in r.stdout


def test_uart_boards_get_flow_control_overlay(tmp_path):
    r = run_tool("nrf52840dk", "--dry-run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    overlay = (tmp_path / "build-herald-nrf52840dk-config" / "herald-nrf52840dk.overlay").read_text()
    assert "current-speed = <1000000>;" in overlay and "hw-flow-control;" in overlay
    assert "-DEXTRA_DTC_OVERLAY_FILE=" in r.stdout


def test_missing_west_explains_how_to_get_it(tmp_path):
    env = dict(os.environ, PATH="/usr/bin:/bin", ZEPHYR_BASE="")
    if any((Path(p) / "west").exists() for p in env["PATH"].split(":")):
        import pytest
        pytest.skip("west is installed here")
    r = subprocess.run([str(TOOL), "nrf52840dongle"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert r.returncode == 3
    assert "pip install west" in r.stderr and "west init" in r.stderr and "west update" in r.stderr
