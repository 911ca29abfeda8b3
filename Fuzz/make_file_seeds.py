#!/usr/bin/env python3
"""Seeds for the file-reader fuzz targets (Fuzz/DFUPackage.swift ... Fuzz/BoardProfile.swift).

usage: Fuzz/make_file_seeds.py HERALD_BIN

Writes Fuzz/Corpus/<target>/seed-*: small valid files of each format (libFuzzer mutates from them),
made from the repository's fixtures (Tests/Fixtures/dfu, Boards/), the btsnoop captures beside the
repository (../shared/captures) and, for the logs and keys, a secret key made with `herald keys new`
whose matching keys (`herald keys export`) match the payloads in the generated payloads.csv
(`herald keys derive`). Seeds are kept small: each target caps its input (`// fuzz: max_len=`).
"""
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "Fuzz" / "Corpus"
SHARED = ROOT.parent / "shared"


def put(target: str, name: str, data: bytes):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / f"seed-{name}").write_bytes(data)


# --- DFU: the init packet nrfutil writes (protobuf), a package around a small image ----------------
def varint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field_varint(n: int, v: int) -> bytes:
    return varint(n << 3) + varint(v)


def field_bytes(n: int, b: bytes) -> bytes:
    return varint(n << 3 | 2) + varint(len(b)) + b


def init_packet(image: bytes) -> bytes:
    """DFUInitPacket.application: fw 1, hw 52, sd_req [0], application, SHA-256 (reversed), CRC boot validation."""
    body = (field_varint(1, 1) + field_varint(2, 52) + field_bytes(3, varint(0)) + field_varint(4, 1)
            + field_varint(5, 0) + field_varint(6, 0) + field_varint(7, len(image))
            + field_bytes(8, field_varint(1, 3) + field_bytes(2, hashlib.sha256(image).digest()[::-1]))
            + field_varint(9, 0) + field_bytes(10, field_varint(1, 1) + field_bytes(2, b"")))
    command = field_varint(1, 1) + field_bytes(2, body)
    return field_bytes(1, command)


def package(image: bytes, method: int) -> bytes:
    manifest = {"manifest": {"application": {"bin_file": "app.bin", "dat_file": "app.dat"}, "dfu_version": 0.5}}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as z:
        for name, data in (("manifest.json", json.dumps(manifest).encode()), ("app.dat", init_packet(image)),
                           ("app.bin", image)):
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = method
            z.writestr(info, data)
    return buf.getvalue()


def hex_records(image: bytes, base: int, segment: bool = False) -> bytes:
    lines = []

    def record(kind: int, address: int, data: bytes):
        raw = bytes([len(data), address >> 8 & 0xFF, address & 0xFF, kind]) + data
        lines.append(":" + (raw + bytes([-sum(raw) & 0xFF])).hex().upper())

    if segment:
        record(0x02, 0, (base >> 4).to_bytes(2, "big"))
    else:
        record(0x04, 0, (base >> 16).to_bytes(2, "big"))
    offset = base & 0xFFFF if not segment else 0
    for i in range(0, len(image), 16):
        record(0x00, offset + i, image[i:i + 16])
    record(0x05, 0, base.to_bytes(4, "big"))
    record(0x01, 0, b"")
    return ("\n".join(lines) + "\n").encode()


def dfu_seeds():
    image = bytes((i * 37 + 11) & 0xFF for i in range(200))
    put("DFUPackage", "stored", package(image, zipfile.ZIP_STORED))
    put("DFUPackage", "deflated", package(image * 4, zipfile.ZIP_DEFLATED))
    nrfutil = zipfile.ZipFile(ROOT / "Tests" / "Fixtures" / "dfu" / "app.zip")
    put("DFUInitPacket", "nrfutil", nrfutil.read("app.dat"))
    put("DFUInitPacket", "small", init_packet(image))
    put("DFUInitPacket", "signed", field_bytes(2, field_bytes(1, field_varint(1, 1) + field_bytes(2, field_varint(7, 4))) + field_bytes(2, b"\x01" * 8)))
    fixture = (ROOT / "Tests" / "Fixtures" / "dfu" / "app.hex").read_text().splitlines()
    put("IntelHex", "nrfutil-head", ("\n".join(fixture[:24] + [":00000001FF"]) + "\n").encode())
    put("IntelHex", "linear", hex_records(image, 0x1000))
    put("IntelHex", "segment", hex_records(image[:64], 0x1000, segment=True).replace(b"\n", b"\r\n"))


def btsnoop_seeds():
    for capture in sorted((SHARED / "captures").glob("*.btsnoop")):
        put("BTSnoop", capture.stem, capture.read_bytes())
    put("BTSnoop", "header-only", b"btsnoop\x00" + (1).to_bytes(4, "big") + (1002).to_bytes(4, "big"))


# --- Logs and keys: a wearable whose payloads another device read ---------------------------------
def herald(binary: str, *args: str) -> str:
    return subprocess.run([binary, *args], check=True, capture_output=True, text=True).stdout


def log_seeds(binary: str):
    with tempfile.TemporaryDirectory() as tmp:
        key = os.path.join(tmp, "w.key")
        herald(binary, "keys", "new", "--out", key)
        payloads = []
        for minute in (0, 6, 12):
            t = f"2026-11-21T10:{minute:02d}:30Z"
            derived = json.loads(herald(binary, "keys", "derive", "--secret-key-file", key, "--time", t, "--json"))
            payloads.append((f"2026-11-21 10:{minute:02d}:30.000+0000", derived["payload"]))
        keys = herald(binary, "keys", "export", "--secret-key-file", key, "--from", "2026-11-20", "--to", "2026-11-22")
        secret = Path(key).read_bytes()
        irk = Path(key + ".irk").read_bytes()
    rows = "time,target,payload\n" + "".join(f"{t},T{i + 1},{p}\n" for i, (t, p) in enumerate(payloads))
    rows += "2026-11-21 10:13:00.000+0000,T9,303a0300000000000000\n"
    contacts = "time,sensor,id,detect,read,measure,share,visit,detectHerald,delete,data\n"
    for i, (t, _) in enumerate(payloads):
        contacts += f"{t},BLE,T{i + 1},1,,,,,,,\n{t},BLE,T{i + 1},,,3,,,,,RSSI:-48.0\n"
    put("MatchLogs", "exported", (keys + "\0" + rows + "\0" + contacts).encode())
    put("MatchLogs", "base64-lines", ("\n".join(l.split(",")[-1] for l in keys.splitlines()[1:]) + "\0" + rows).encode())
    put("SecretKey", "valid", b"\x00" + secret + b"\0" + irk)
    put("SecretKey", "no-irk", b"\x00" + secret)

    def device(name: str, own: str, peer: str, later: str) -> bytes:
        detection = f"{name},Linux,6.1,{own},{peer}\n"
        text = (f"2026-11-21 10:00:00.000+0000,info,Sensor,Wearable,started; own payload {own}\n"
                f"2026-11-21 10:06:00.000+0000,info,Sensor,Wearable,own payload {later} from now on\n")
        served = f"time,shortName,payload\n2026-11-21 10:00:00.000+0000,{own},10000000001111\n"
        contacts = "time,sensor,id,detect,read,measure,share,visit,detectHerald,delete,data\n"
        for s in range(0, 180, 20):
            t = f"2026-11-21 10:{s // 60:02d}:{s % 60:02d}.000+0000"
            contacts += f"{t},BLE,T1,,,3,,,,,RSSI:-35.0\n"
            if s == 0:
                contacts = contacts.replace(f"{t},BLE,T1,,,3", f"{t},BLE,T1,1,,,,,,,\n{t},BLE,T1,,2,,,,,,{peer}\n{t},BLE,T1,,,3", 1)
        contacts += f"2026-11-21 10:03:00.000+0000,BLE,T2,,,,4,,,,{peer}\n"
        return "\0".join([detection, text, served, contacts]).encode()

    put("AnalyseLogs", "two-wearables", device("a", "AADsmp", "AADTX3", "AAEaaa") + b"\0" + device("b", "AADTX3", "AADsmp", "AAEbbb"))
    put("AnalyseLogs", "reference-app", ("Pixel,Android,14,AACgoK\n\0\0\0time,sensor,id,detect,read,measure,share,visit,data\n"
                                         "2026-11-21 10:00:00,BLE,T1,,2,,,,AADsmp\n2026-11-21 10:00:01,BLE,T1,,,3,,,RSSI:-60\n"
                                         "\0a,Linux,6.1,AADsmp\n\0\0\0" + "time,sensor,id,detect,read,measure,share,visit,detectHerald,delete,data\n"
                                         "2026-11-21 10:00:02.000+0000,BLE,T1,,,,4,,,,AACgoK\n").encode())


def board_seeds():
    for board in sorted((ROOT / "Boards").glob("*.json")):
        put("BoardProfile", board.stem, board.read_bytes())


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    dfu_seeds()
    btsnoop_seeds()
    log_seeds(sys.argv[1])
    board_seeds()


if __name__ == "__main__":
    main()
