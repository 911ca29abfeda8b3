"""Reads the log of a single-chip Herald app (our core as the Bluetooth host of a Zephyr application on
the simulated nRF52, `Tools/firmware build wearable@nrf52_bsim`): its sensor events, the H:4 packets
it exchanged with its own controller, and its threads' stack high-water marks.

The app's printk goes to `LOGDIR/app<device>-zephyr.log`, each line prefixed by BabbleSim with the
device and the simulated time (`d_05: @00:01:02.345678  `). What the app prints (Firmware's contract
with the interop tests):
- each sensor event as one JSON object on a line of its own, as `herald wearable --json` prints them;
- every H:4 packet as `hci> HEX` (host to controller, the H:4 type byte first) or `hci< HEX`
  (controller to host);
- `memory thread=NAME stack_size=N stack_used=N`.

The board's printk hook (Zephyr 2.5 `boards/posix/nrf52_bsim/trace_hook.c`) prints a line in pieces of
255 characters, each with its own prefix, so a piece of exactly 255 characters continues on the next
line; `lines` puts them back together.

`write_btsnoop` turns the HCI lines into the btsnoop file `snoop.py` reads (v1, datalink 1002), with
the simulated time as the capture's clock (from `epoch`, the Unix time the image believes it booted at).

    python chip.py btsnoop APP_LOG OUT [EPOCH]   the capture (prints how many packets)
    python chip.py events APP_LOG                the events, one per line with the simulated time
    python chip.py memory APP_LOG                each thread's stack high-water mark
"""
import bisect
import json
import os
import re
import struct
import sys
import threading
import time

PREFIX = re.compile(r"^d_\d+: @(\d+):(\d+):(\d+(?:\.\d+)?)  ?(.*)$")
PIECE = 255  # trace_hook.c prints a line's first 255 characters when its buffer fills
# btsnoop timestamps count microseconds from midnight, 1 January of year 0 (snoop.UNIX_EPOCH).
UNIX_EPOCH = 62168256000
MEMORY = re.compile(r"memory thread=(\S+) stack_size=(\d+) stack_used=(\d+)")


class Joiner:
    """Turns the raw lines of an app's log into (simulated seconds, text), the pieces of a long line
    joined (the time is the first piece's); lines without BabbleSim's prefix (the board's own
    messages) are skipped. `feed` returns the lines it completed: a piece of exactly 255 characters
    waits for the next line."""

    def __init__(self):
        self.pending = None

    def feed(self, raw):
        m = PREFIX.match(raw.decode("utf-8", "replace").rstrip("\r\n") if isinstance(raw, bytes) else raw.rstrip("\r\n"))
        if not m:
            return []
        body = m[4]
        if self.pending is not None:
            t, before = self.pending
            line = (t, before + body)
        else:
            line = (int(m[1]) * 3600 + int(m[2]) * 60 + float(m[3]), body)
        if len(body) == PIECE:
            self.pending = line
            return []
        self.pending = None
        return [line]


def lines(path):
    """(simulated seconds, text) for every line the app printed (`Joiner`)."""
    out, joiner = [], Joiner()
    with open(path, "rb") as f:
        for raw in f:
            out += joiner.feed(raw)
    return out


def event_of(body):
    """The event dict a line holds, or None."""
    if not body.startswith("{"):
        return None
    try:
        e = json.loads(body)
    except ValueError:
        return None
    return e if isinstance(e, dict) and "event" in e else None


def events(path):
    """(simulated seconds, event dict) of every JSON line with an `event`."""
    return [(t, e) for t, body in lines(path) if (e := event_of(body)) is not None]


def random_address_of(body):
    """The address of an `hci>` LE Set Random Address (Core 5.4 Vol 4 Part E 7.8.4), or None."""
    if not body.startswith("hci> "):
        return None
    h = body[5:].replace(" ", "").lower()
    if h.startswith("01052006") and len(h) >= 8 + 12:
        return ":".join(f"{b:02X}" for b in reversed(bytes.fromhex(h[8:20])))
    return None


def h4_length(p):
    """The whole length an H:4 packet declares (Core 5.4 Vol 4 Part A 2 and Part E 5.4), None when its
    header is incomplete or the type unknown."""
    if not p:
        return None
    if p[0] == 0x01 and len(p) >= 4:       # command: opcode (2), length (1)
        return 4 + p[3]
    if p[0] == 0x02 and len(p) >= 5:       # ACL: handle and flags (2), length (2)
        return 5 + (p[3] | p[4] << 8)
    if p[0] == 0x04 and len(p) >= 3:       # event: code (1), length (1)
        return 3 + p[2]
    if p[0] == 0x05 and len(p) >= 5:       # ISO: handle and flags (2), length (14 bits)
        return 5 + ((p[3] | p[4] << 8) & 0x3FFF)
    return None


class MalformedHCI(ValueError):
    pass


def hci(path):
    """(simulated seconds, received, H:4 bytes) of every `hci>` (sent, received False) and `hci<` line.
    A packet whose bytes do not match the length its header declares is an error: a capture with a
    packet cut short would mislead every rule that reads it."""
    out = []
    for t, body in lines(path):
        if not body.startswith(("hci> ", "hci< ")):
            continue
        try:
            p = bytes.fromhex(body[5:].strip())
        except ValueError:
            raise MalformedHCI(f"{path}: at {t:.6f} s: not hex: {body[:80]}") from None
        if h4_length(p) != len(p):
            raise MalformedHCI(f"{path}: at {t:.6f} s: {len(p)} octets where the header says {h4_length(p)}: {body[:80]}")
        out.append((t, body[3] == "<", p))
    return out


def write_btsnoop(path, out, epoch=0):
    """Writes the app's HCI as a btsnoop v1 file (datalink 1002, whole H:4 packets) at `out`, the
    records timed at `epoch` + simulated seconds (Unix). Returns how many packets it wrote."""
    packets = hci(path)
    with open(out, "wb") as f:
        f.write(b"btsnoop\0" + struct.pack(">II", 1, 1002))
        for t, received, p in packets:
            # Flags: bit 0 the direction (1: controller to host), bit 1 a command or an event.
            flags = int(received) | (2 if p[0] in (0x01, 0x04) else 0)
            ts = round((epoch + t + UNIX_EPOCH) * 1e6)
            f.write(struct.pack(">IIIIq", len(p), len(p), flags, 0, ts) + p)
    return len(packets)


def stack_marks(path):
    """Per thread: (stack size, the most of it ever used), from the `memory` lines."""
    out = {}
    for _t, body in lines(path):
        m = MEMORY.search(body)
        if m:
            size, used = int(m[2]), int(m[3])
            old = out.get(m[1], (size, 0))
            out[m[1]] = (size, max(used, old[1]))
    return out


class Follow:
    """Follows a running app's log (printk is line-buffered on nrf52_bsim) from a thread: the events,
    each LE Set Random Address the host sent (simulated seconds, address), and the simulated time
    against this process's monotonic clock, so that what other programs did at a wall-clock moment
    can be put on the simulation's timeline (the simulation falls behind wall-clock time on a busy
    machine: the pacer gives up a lag over 5 ms)."""

    def __init__(self, path, poll=0.1):
        self.path = path
        self.events = []      # (simulated seconds, event dict)
        self.addresses = []   # (simulated seconds, address)
        self.clock = []       # (monotonic seconds, simulated seconds of the last line)
        self.changed = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(poll,), daemon=True)
        self._thread.start()

    def _run(self, poll):
        joiner, rest, f = Joiner(), b"", None
        while not self._stop.is_set():
            if f is None and os.path.exists(self.path):
                f = open(self.path, "rb")
            data = f.read() if f else b""
            if data:
                rest += data
                *whole, rest = rest.split(b"\n")
                latest = None
                with self.changed:
                    for raw in whole:
                        for t, body in joiner.feed(raw):
                            latest = t
                            if (e := event_of(body)) is not None:
                                self.events.append((t, e))
                            elif (a := random_address_of(body)) is not None:
                                self.addresses.append((t, a))
                    if latest is not None:
                        self.clock.append((time.monotonic(), latest))
                    self.changed.notify_all()
            else:
                self._stop.wait(poll)
        if f:
            f.close()

    def close(self):
        self._stop.set()
        self._thread.join(5)

    def now(self):
        """The simulated seconds of the last line read (0 before the first)."""
        with self.changed:
            return self.clock[-1][1] if self.clock else 0.0

    def simulated(self, monotonic):
        """The simulated time at a moment of this process's monotonic clock, from the samples either
        side of it (a line's time is when it was printed, so the estimate runs late by at most the
        gap between lines: milliseconds while the wearable hears adverts)."""
        with self.changed:
            samples = list(self.clock)
        if not samples:
            return None
        i = bisect.bisect_left(samples, (monotonic, -1.0))
        if i == 0:
            return samples[0][1] - (samples[0][0] - monotonic)
        if i == len(samples):
            return samples[-1][1] + (monotonic - samples[-1][0])
        (m0, s0), (m1, s1) = samples[i - 1], samples[i]
        return s0 + (s1 - s0) * (monotonic - m0) / (m1 - m0) if m1 > m0 else s1

    def wait_for(self, predicate, timeout):
        """The first (simulated seconds, event) `predicate` accepts, waiting up to `timeout` seconds of
        wall-clock time; None when none came."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                for t, e in self.events:
                    if predicate(e):
                        return t, e
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.changed.wait(min(left, 0.5))

    def wait_until(self, simulated, timeout):
        """Waits until the log reaches `simulated` seconds (or `timeout` wall-clock seconds pass); True
        when it did."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while not (self.clock and self.clock[-1][1] >= simulated):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.changed.wait(min(left, 0.5))
            return True


def main(argv):
    if len(argv) >= 3 and argv[0] == "btsnoop":
        n = write_btsnoop(argv[1], argv[2], float(argv[3]) if len(argv) > 3 else 0)
        print(f"{n} packets -> {argv[2]}")
    elif len(argv) == 2 and argv[0] == "events":
        for t, e in events(argv[1]):
            print(f"{t:11.6f} {json.dumps(e, sort_keys=True)}")
    elif len(argv) == 2 and argv[0] == "memory":
        for name, (size, used) in sorted(stack_marks(argv[1]).items()):
            print(f"{name}: {used} of {size} bytes")
    else:
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
