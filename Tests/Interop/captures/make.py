"""Makes the small captures test_wireshark.py decodes, once (they are committed; run again only when a
role's traffic changes): each run's btsnoop capture beside the JSON the same run printed, so the test
can check that the Wireshark dissector (Tools/wireshark/herald.lua) says what herald said.

usage: HERALD_BIN=.build/debug/herald .venv/bin/python Tests/Interop/captures/make.py [wearables] [beacon] [cpp]

  wearables  Bumble: wearable A (sends `cafe01` at 12 s), a Herald "Android" phone and wearable B
             (`--payload test`), 25 s: a.btsnoop / a.jsonl (A reading the phone and B, writing its payload in
             two 20-octet fragments), b.btsnoop / b.jsonl (B being read and written to, and reading A)
  beacon     Bumble: `herald beacon` (826/0/12345, premises name "Café Nord") read by `herald scan --json
             --read-payloads`: scan.btsnoop / scan.json
  cpp        Zephyr 2.5 with herald-for-cpp's wearable and venue beacon (../shared): `herald scan
             --byte-order apps` reads the fixed test payload 0x08 and the reference's beacon:
             cpp-scan.btsnoop / cpp-scan.json

Advertising reports after the first 4 per advertiser are left out of each capture (they are most of its
bytes and nothing in them is new), so every file stays small.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from radio import ZephyrRadio, open_radio  # noqa: E402
from test_wearable import Lines, phone, stop, wearable  # noqa: E402

HERALD = os.environ.get("HERALD_BIN") or str(HERE.parents[2] / ".build" / "debug" / "herald")
ANDROID_PAYLOAD = "10" + "033a" + "0000" + "a1" * 16
TEST_ID = bytes(range(16)).hex()
# The wearables' JSON events the captures are compared with (the many didMeasure are left out).
KEPT = {"ready", "connected", "disconnected", "didRead", "payload-read", "signal", "didReceive", "didShare", "keep-awake",
        "signal-rejected"}


def thin(path, keep=4):
    """Rewrites a btsnoop capture without the advertising reports after the first `keep` per advertiser."""
    data = path.read_bytes()
    out, seen, offset = bytearray(data[:16]), {}, 16
    while offset + 24 <= len(data):
        incl = struct.unpack(">I", data[offset + 4:offset + 8])[0]
        rec = data[offset:offset + 24 + incl]
        p = rec[24:]
        offset += 24 + incl
        if len(p) > 13 and p[0] == 0x04 and p[1] == 0x3E and p[3] in (0x02, 0x0D):
            key = bytes(p[6:13]) if p[3] == 0x02 else bytes(p[7:14])
            seen[key] = seen.get(key, 0) + 1
            if seen[key] > keep:
                continue
        out += rec
    path.write_bytes(bytes(out))


def wearables():
    radio = open_radio("bumble", 3)
    try:
        logs = Path(tempfile.mkdtemp())
        a = wearable(HERALD, radio.paths[0], logs / "a", "--btsnoop", str(HERE / "a.btsnoop"), stdin=subprocess.PIPE)
        android, _ = phone(radio.paths[1], "C1:00:00:00:00:01", "android", ANDROID_PAYLOAD)
        b = wearable(HERALD, radio.paths[2], logs / "b", "--payload", "test", "--test-identifier", TEST_ID,
                     "--btsnoop", str(HERE / "b.btsnoop"))
        time.sleep(12)
        a.proc.stdin.write("send cafe01\n")
        a.proc.stdin.flush()
        time.sleep(13)
        for p in (a, b):
            stop(p.proc)
        stop(android.proc)
        for name, w in (("a", a), ("b", b)):
            (HERE / f"{name}.jsonl").write_text("".join(json.dumps(e) + "\n" for _, e in w.lines if e.get("event") in KEPT))
    finally:
        radio.close()
    for name in ("a", "b"):
        thin(HERE / f"{name}.btsnoop")


def beacon():
    radio = open_radio("bumble", 2)
    try:
        b = Lines([HERALD, "beacon", "--transport", f"tty:{radio.paths[1]}", "--country", "826", "--state", "0",
                   "--location-code", "12345", "--extended", "10" + "0a" + "Café Nord".encode().hex(), "--json"],
                  parse_json=True)
        b.wait_for(lambda e: e.get("event") == "ready", timeout=20)
        r = subprocess.run([HERALD, "scan", "--transport", f"tty:{radio.paths[0]}", "--duration", "6", "--summary-only",
                            "--json", "--read-payloads", "--btsnoop", str(HERE / "scan.btsnoop")],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        (HERE / "scan.json").write_text(r.stdout)
        stop(b.proc)
    finally:
        radio.close()
    thin(HERE / "scan.btsnoop")


def cpp():
    radio = ZephyrRadio(1, kind="zephyr25", apps=("herald-cpp-wearable.exe", "herald-cpp-venue-beacon.exe"))
    try:
        # The reference apps advertise from ~16 s after boot; connect before their coordinators start (~31 s).
        r = subprocess.run([HERALD, "scan", "--transport", f"tty:{radio.paths[0]}", "--duration", "30", "--summary-only",
                            "--json", "--read-payloads", "--byte-order", "apps", "--btsnoop", str(HERE / "cpp-scan.btsnoop")],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        (HERE / "cpp-scan.json").write_text(r.stdout)
    finally:
        radio.close()
    thin(HERE / "cpp-scan.btsnoop")


if __name__ == "__main__":
    for what in sys.argv[1:] or ["wearables", "beacon", "cpp"]:
        {"wearables": wearables, "beacon": beacon, "cpp": cpp}[what]()
        print(f"made {what}")
