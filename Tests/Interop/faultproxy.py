"""A fault-injecting H4 proxy between our runtime and a (Bumble virtual) controller.

Our side opens a pty the proxy creates (`host_path`, a symlink like Bumble's); the proxy opens the
controller's pty (`controller_path`). Bytes are forwarded packet by packet (the proxy frames H4 in both
directions, so faults can go between packets or replace whole packets), and can be:
- garbage: random bytes toward the host, at a steady rate, between packets;
- junk commands toward the controller (well-framed commands with unused opcodes and random parameters,
  which the controller answers with errors), plus lone bytes that cannot start a packet;
- dropped, duplicated or delayed (whole packets, by probability);
- injected: any H4 packet (e.g. a Hardware Error event) toward either side;
- cut: nothing passes in either direction until `restore()`.
When the controller's pty goes away (its process was killed) the proxy keeps our side open and reopens
the controller path as soon as it exists again, like a UART whose far end rebooted.

Raw garbage toward the Bumble controller is written as lone invalid-type bytes in their own writes:
Bumble's H4 parser throws away the rest of a read chunk after an invalid packet type (Zephyr's H4 driver
discards only the byte), so mixing raw noise with real commands would test Bumble, not us.

Usage from a test: `with FaultProxy(ctl_path, host_path) as proxy: proxy.garbage_to_host = 0.1 ...`;
from a shell: `python faultproxy.py CONTROLLER_PTY HOST_LINK [--garbage SECONDS]`.
"""
import os
import random
import select
import sys
import termios
import threading
import time
import tty

# H4 packet indicator -> (header length after the indicator, offset of the length field, its size).
H4_HEADERS = {
    0x01: (3, 2, 1),  # command: opcode u16, length u8
    0x02: (4, 2, 2),  # ACL: handle u16, length u16
    0x03: (3, 2, 1),  # SCO
    0x04: (2, 1, 1),  # event: code u8, length u8
    0x05: (4, 2, 2),  # ISO (length has flags in the top bits; masked below)
}


class H4Splitter:
    """Splits a byte stream into H4 packets; bytes that cannot start a packet are passed as their own
    'packet' so nothing is silently lost by the proxy itself."""

    def __init__(self):
        self.buf = bytearray()

    def feed(self, data):
        self.buf += data
        out = []
        while self.buf:
            t = self.buf[0]
            if t not in H4_HEADERS:
                out.append(bytes(self.buf[:1]))
                del self.buf[:1]
                continue
            hlen, off, size = H4_HEADERS[t]
            if len(self.buf) < 1 + hlen:
                break
            length = int.from_bytes(self.buf[1 + off:1 + off + size], "little")
            if t == 0x05:
                length &= 0x3FFF
            total = 1 + hlen + length
            if len(self.buf) < total:
                break
            out.append(bytes(self.buf[:total]))
            del self.buf[:total]
        return out


def _raw(fd):
    attrs = termios.tcgetattr(fd)
    tty.setraw(fd)
    attrs = termios.tcgetattr(fd)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSANOW, attrs)


class FaultProxy:
    def __init__(self, controller_path, host_path, seed=1):
        self.controller_path = controller_path
        self.host_path = host_path
        self.rng = random.Random(seed)
        # Fault knobs (changed freely while running).
        self.garbage_to_host = 0.0        # seconds between garbage bursts toward the host (0 = off)
        self.garbage_to_controller = 0.0  # seconds between junk commands / lone bytes toward the controller
        self.burst = (1, 8)               # garbage burst length range toward the host
        self.drop = {"host": 0.0, "controller": 0.0}
        self.duplicate = {"host": 0.0, "controller": 0.0}
        self.delay = {"host": 0.0, "controller": 0.0}
        self.cut = False
        # What happened (for assertions and reports).
        self.stats = {"to_host_packets": 0, "to_controller_packets": 0, "garbage_to_host_bytes": 0,
                      "junk_commands": 0, "lone_bytes_to_controller": 0, "dropped": 0, "duplicated": 0,
                      "injected": 0, "controller_reopens": 0}
        # (time, opcode) of every command our host sent, to see bring-up and roles resume.
        self.commands = []
        self._inject = {"host": [], "controller": []}
        self._lock = threading.Lock()
        self._stop = False
        self._ctl = None
        self._ctl_target = self._dead_target = None

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self):
        self._master, self._slave = os.openpty()
        _raw(self._slave)
        _raw(self._master)
        if os.path.lexists(self.host_path):
            os.unlink(self.host_path)
        os.symlink(os.ttyname(self._slave), self.host_path)
        self._open_controller()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        self._stop = True
        self._thread.join(10)
        # Closing descriptors under a loop still running would let it read and write whatever the
        # numbers are reused for next (another proxy's ptys in the same test process).
        assert not self._thread.is_alive(), "fault proxy loop did not stop"
        for fd in (self._ctl, self._master, self._slave):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        if os.path.lexists(self.host_path):
            os.unlink(self.host_path)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _link_id(self):
        # The symlink itself (Bumble makes a new one per start); its pty number may be reused.
        try:
            st = os.lstat(self.controller_path)
            return (st.st_ino, st.st_ctime_ns)
        except OSError:
            return None

    def _open_controller(self):
        try:
            fd = os.open(self.controller_path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        except OSError:
            self._ctl = None
            return False
        _raw(fd)
        self._ctl = fd
        self._ctl_target = self._link_id()
        self._from_ctl = H4Splitter()
        return True

    # -- control ----------------------------------------------------------------------------------
    def inject(self, toward, packet):
        """Queues a whole H4 packet toward 'host' or 'controller'; it goes out between packets."""
        with self._lock:
            self._inject[toward].append(bytes(packet))

    def restore(self):
        self.cut = False

    def opcodes_since(self, t):
        return [op for when, op in list(self.commands) if when >= t]

    # -- the loop ---------------------------------------------------------------------------------
    def _write(self, fd, data):
        # Nobody may be reading (our runtime has exited and the pty buffer is full): give up after a
        # second rather than block the loop, which must stay able to stop (see `stop`).
        deadline = time.time() + 1
        while data and not self._stop:
            try:
                n = os.write(fd, data)
                data = data[n:]
            except BlockingIOError:
                if time.time() > deadline:
                    return
                time.sleep(0.001)
            except OSError:
                return

    def _forward(self, toward, packet):
        fd = self._master if toward == "host" else self._ctl
        if fd is None or self.cut:
            return
        if self.rng.random() < self.drop[toward]:
            self.stats["dropped"] += 1
            return
        if self.delay[toward]:
            time.sleep(self.delay[toward])
        self._write(fd, packet)
        self.stats["to_host_packets" if toward == "host" else "to_controller_packets"] += 1
        if self.rng.random() < self.duplicate[toward]:
            self.stats["duplicated"] += 1
            self._write(fd, packet)

    def _junk_command(self):
        # LE OGF 0x08 with an OCF no specification assigns: answered "Unknown HCI Command" (0x01).
        ocf = self.rng.randrange(0x0100, 0x03FF)
        opcode = (0x08 << 10) | ocf
        params = bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(0, 12)))
        return bytes([0x01]) + opcode.to_bytes(2, "little") + bytes([len(params)]) + params

    def _run(self):
        from_host = H4Splitter()
        next_host_garbage = next_ctl_garbage = time.time()
        while not self._stop:
            now = time.time()
            if self._ctl is None:
                # Only a new pty: the dead controller's symlink may now name someone else's pty.
                fresh = os.path.exists(self.controller_path) and self._link_id() != self._dead_target
                if fresh and self._open_controller():
                    self.stats["controller_reopens"] += 1
            fds = [self._master] + ([self._ctl] if self._ctl is not None else [])
            try:
                readable, _, _ = select.select(fds, [], [], 0.01)
            except OSError:
                readable = []
            for fd in readable:
                try:
                    data = os.read(fd, 4096)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if fd == self._master:
                    # Our runtime closing its end reads as EIO until it reopens: keep going.
                    if not data:
                        time.sleep(0.01)
                        continue
                    for p in from_host.feed(data):
                        if p[:1] == b"\x01" and len(p) >= 3:
                            self.commands.append((time.time(), int.from_bytes(p[1:3], "little")))
                        self._forward("controller", p)
                else:
                    if not data:
                        # The controller went away (process killed): wait for its pty to come back.
                        os.close(self._ctl)
                        self._ctl = None
                        self._dead_target = self._ctl_target
                        if os.path.lexists(self.controller_path) and not os.path.exists(self.controller_path):
                            pass
                        time.sleep(0.05)
                        continue
                    for p in self._from_ctl.feed(data):
                        self._forward("host", p)
            with self._lock:
                queued = {k: v[:] for k, v in self._inject.items()}
                for v in self._inject.values():
                    v.clear()
            for toward, packets in queued.items():
                for p in packets:
                    fd = self._master if toward == "host" else self._ctl
                    if fd is not None:
                        self._write(fd, p)
                        self.stats["injected"] += 1
            if self.cut:
                continue
            if self.garbage_to_host and now >= next_host_garbage:
                next_host_garbage = now + self.garbage_to_host
                junk = bytes(self.rng.randrange(256) for _ in range(self.rng.randint(*self.burst)))
                self._write(self._master, junk)
                self.stats["garbage_to_host_bytes"] += len(junk)
            if self.garbage_to_controller and self._ctl is not None and now >= next_ctl_garbage:
                next_ctl_garbage = now + self.garbage_to_controller
                if self.rng.random() < 0.5:
                    self._write(self._ctl, self._junk_command())
                    self.stats["junk_commands"] += 1
                else:
                    # A byte no H4 packet starts with, alone in its write (see the module comment).
                    time.sleep(0.005)
                    self._write(self._ctl, bytes([self.rng.choice([0x00, 0x07, 0x42, 0x99, 0xFF])]))
                    time.sleep(0.005)
                    self.stats["lone_bytes_to_controller"] += 1


# Packets a controller sends when it fails (for injection toward the host).
HARDWARE_ERROR = bytes([0x04, 0x10, 0x01, 0x00])  # Core 5.4 Vol 4 Part E 7.7.16, code 0


def zephyr_fatal_legacy():
    """Zephyr's older fatal-error vendor event: event 0xFF, first byte 0xAA, then a stack dump."""
    body = bytes([0xAA]) + bytes(range(8))
    return bytes([0x04, 0xFF, len(body)]) + body


def zephyr_assert(file="lll_conn.c", line=1234):
    """Zephyr's controller-assert vendor event: event 0xFF, data type 0x02, NUL-terminated file, u32 line."""
    body = bytes([0x02]) + file.encode() + b"\0" + line.to_bytes(4, "little")
    return bytes([0x04, 0xFF, len(body)]) + body


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("controller")
    ap.add_argument("host_link")
    ap.add_argument("--garbage", type=float, default=0.0, help="seconds between garbage bursts (both ways)")
    ap.add_argument("--drop", type=float, default=0.0)
    ap.add_argument("--duplicate", type=float, default=0.0)
    a = ap.parse_args(argv)
    proxy = FaultProxy(a.controller, a.host_link).start()
    proxy.garbage_to_host = proxy.garbage_to_controller = a.garbage
    proxy.drop = {"host": a.drop, "controller": a.drop}
    proxy.duplicate = {"host": a.duplicate, "controller": a.duplicate}
    print(f"proxy {a.host_link} <-> {a.controller}", flush=True)
    try:
        while True:
            time.sleep(5)
            print(proxy.stats, flush=True)
    except KeyboardInterrupt:
        proxy.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
