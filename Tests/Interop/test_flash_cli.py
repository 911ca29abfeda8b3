"""`herald flash` end to end: the CLI binary against a small Nordic Secure DFU bootloader written here in
Python (an implementation independent of the Swift simulator in Tests/HeraldRuntimeTests), on a pty."""
import hashlib
import os
import pty
import select
import struct
import subprocess
import threading
import time
import tty
import zipfile
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "Tests" / "Fixtures" / "dfu"

END, ESC, ESC_END, ESC_ESC = 0xC0, 0xDB, 0xDC, 0xDD


def slip(packet: bytes) -> bytes:
    return packet.replace(bytes([ESC]), bytes([ESC, ESC_ESC])).replace(bytes([END]), bytes([ESC, ESC_END])) + bytes([END])


class Bootloader(threading.Thread):
    """Nordic Secure DFU over SLIP: just what a flash needs, plus an init-packet hw_version check."""

    def __init__(self, hw_version=52, mtu=2051):
        super().__init__(daemon=True)
        self.master, slave = pty.openpty()
        tty.setraw(slave)
        self.path = os.ttyname(slave)
        self.slave = slave
        self.hw_version, self.mtu = hw_version, mtu
        self.cmd, self.cmd_size, self.data, self.executed = b"", 0, b"", 0
        self.selected, self.prn, self.since_prn = None, 0, 0
        self.init = None
        self.installed = None
        self.stop = False
        self.start()

    def reply(self, op, result=1, payload=b""):
        os.write(self.master, slip(bytes([0x60, op, result]) + payload))

    def crc_reply(self, op):
        buf = self.cmd if self.selected == 1 else self.data
        self.reply(op, 1, struct.pack("<II", len(buf), zlib.crc32(buf)))

    def handle(self, p: bytes):
        op = p[0]
        if op == 0x09:
            self.reply(op, 1, p[1:2])
        elif op == 0x00:
            self.reply(op, 1, b"\x01")
        elif op == 0x0A:
            self.reply(op, 1, struct.pack("<IIIII", 0x52840, 0, 1 << 20, 1 << 18, 4096))
        elif op == 0x02:
            self.prn, self.since_prn = struct.unpack("<H", p[1:3])[0], 0
            self.reply(op)
        elif op == 0x07:
            self.reply(op, 1, struct.pack("<H", self.mtu))
        elif op == 0x06:
            self.selected = p[1]
            buf, mx = (self.cmd, 512) if p[1] == 1 else (self.data, 4096)
            self.reply(op, 1, struct.pack("<III", mx, len(buf), zlib.crc32(buf)))
        elif op == 0x01:
            # nrf_dfu_serial.c restarts the PRN count on every Create.
            self.selected, size, self.since_prn = p[1], struct.unpack("<I", p[2:6])[0], 0
            if p[1] == 1:
                self.cmd, self.cmd_size, self.data, self.executed, self.init = b"", size, b"", 0, None
            else:
                self.data = self.data[: self.executed]
            self.reply(op)
        elif op == 0x08:
            if self.selected == 1:
                self.cmd += p[1:]
            else:
                self.data += p[1:]
            self.since_prn += 1
            if self.prn and self.since_prn == self.prn:
                self.since_prn = 0
                self.crc_reply(0x03)
        elif op == 0x03:
            self.crc_reply(op)
        elif op == 0x04:
            if self.selected == 1:
                hw = self.parse_hw(self.cmd)
                if hw != self.hw_version:
                    return self.reply(op, 0x0B, b"\x06")  # EXT_ERROR: HW version failure
                self.init = self.cmd
                self.reply(op)
            else:
                self.executed = len(self.data)
                done = self.init is not None and len(self.data) == self.app_size(self.init)
                if done and hashlib.sha256(self.data).digest()[::-1] in self.init:
                    self.installed = self.data  # before answering: the host may exit right after
                self.reply(op)
                if done:
                    time.sleep(0.3)  # the real bootloader resets shortly after its last answer
                    self.stop = True
        else:
            self.reply(op, 0x02)

    @staticmethod
    def varint(b, i):
        v = s = 0
        while True:
            c = b[i]; i += 1
            v |= (c & 0x7F) << s; s += 7
            if not c & 0x80:
                return v, i

    def fields(self, b):
        i, out = 0, []
        while i < len(b):
            key, i = self.varint(b, i)
            if key & 7 == 0:
                v, i = self.varint(b, i)
            else:
                n, i = self.varint(b, i)
                v, i = b[i:i + n], i + n
            out.append((key >> 3, v))
        return out

    def init_fields(self, packet):
        command = dict(self.fields(packet))[1]
        return dict(self.fields(dict(self.fields(command))[2]))

    def parse_hw(self, packet):
        return self.init_fields(packet).get(2)

    def app_size(self, packet):
        return self.init_fields(packet).get(7)

    def run(self):
        frame, esc = bytearray(), False
        while not self.stop:
            r, _, _ = select.select([self.master], [], [], 0.05)
            if not r:
                continue
            try:
                chunk = os.read(self.master, 4096)
            except OSError:
                break
            for c in chunk:
                if c == END:
                    if frame:
                        self.handle(bytes(frame))
                    frame = bytearray()
                elif esc:
                    frame.append(END if c == ESC_END else ESC)
                    esc = False
                elif c == ESC:
                    esc = True
                else:
                    frame.append(c)
        os.close(self.master)
        os.close(self.slave)


def herald(herald_bin, *args):
    return subprocess.run([herald_bin, "flash", *args], capture_output=True, text=True, timeout=60)


def test_flash_hex_through_the_cli(herald_bin):
    bl = Bootloader()
    r = herald(herald_bin, "--hex", str(FIXTURES / "app.hex"), "--port", bl.path, "--prn", "4")
    assert r.returncode == 0, r.stderr
    image = zipfile.ZipFile(FIXTURES / "app.zip").read("app.bin")
    assert bl.installed == image
    # The init packet we sent is nrfutil's, byte for byte.
    assert bl.init == zipfile.ZipFile(FIXTURES / "app.zip").read("app.dat")
    assert "100% 23456/23456 bytes" in r.stdout
    assert "done: 23456 bytes" in r.stdout


def test_flash_package_through_the_cli(herald_bin):
    bl = Bootloader(mtu=131)
    r = herald(herald_bin, "--package", str(FIXTURES / "app.zip"), "--port", bl.path)
    assert r.returncode == 0, r.stderr
    assert bl.installed == zipfile.ZipFile(FIXTURES / "app.zip").read("app.bin")


def test_wrong_hardware_version_is_named_by_the_cli(herald_bin):
    bl = Bootloader(hw_version=53)
    r = herald(herald_bin, "--hex", str(FIXTURES / "app.hex"), "--port", bl.path)
    bl.stop = True
    assert r.returncode == 1
    assert "init packet rejected: HW version failure" in r.stderr
    assert bl.installed is None
