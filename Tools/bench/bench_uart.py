"""Notification throughput from our GATT server through a UART paced at a real baud rate.

usage: python bench_uart.py HERALD_BIN [--baud 1000000] [--notifications N] [--mtu M] [--size S]

A pacing proxy sits between `herald bench-serve` (notifications of S octets, default ATT_MTU - 3,
sent as fast as the ACL queue takes them) and a Bumble virtual controller: it owns a
pty for herald and relays bytes to and from the controller's pty, releasing each direction at the
configured baud (8N1: 10 bits per byte, so 1,000,000 baud = 100,000 bytes/s). A Bumble central on a
second controller subscribes to the notifying characteristic and times the notifications from the
first to the last. The figure is payload bytes/s as a fraction of the ideal for that payload: the
UART's byte rate times payload / (payload + ATT 3 + L2CAP 4 + (H4 1 + ACL 4) per ACL fragment of
the controller's LE ACL buffer size).
"""
import argparse
import asyncio
import json
import math
import os
import signal
import select
import subprocess
import sys
import tempfile
import threading
import time
import tty
from pathlib import Path

from bumble.core import UUID
from bumble.device import Device, Peer
from bumble.hci import Address
from bumble.transport import open_transport

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_vs_bumble import find, start_controllers  # noqa: E402
from radio import KINDS  # noqa: E402 (bench_vs_bumble put Tests/Interop on the path)

NOTIFYING = UUID("4c4d0004-7e57-4e3a-9d8c-5a1f3c2b1a00")
# What LE Read Buffer Size reports: Bumble's Controller.le_acl_data_packet_length; Zephyr's hci_uart
# as built in ../shared/controllers/zephyr-bsim-3.0 and zephyr-bsim (7 x 251 octets in both versions).
ACL_BUFFER = {"bumble": 27, "zephyr": 251, "zephyr25": 251}


class BenchServe:
    """`herald bench-serve` in the background; waits for its "advertising address=..." line."""

    def __init__(self, binary: str, port: str, count: int, size: int, workdir: str):
        self.err = open(os.path.join(workdir, "herald.err"), "w")
        self.proc = subprocess.Popen([binary, "bench-serve", "--transport", f"tty:{port}", "--notify-count", str(count),
                                      "--notify-size", str(size)], stdout=subprocess.PIPE, stderr=self.err, text=True)
        self.address = None
        ready = threading.Event()

        def read():
            for line in self.proc.stdout:
                if line.startswith("advertising address="):
                    self.address = line.strip().split("=", 1)[1]
                    ready.set()
        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(30):
            raise SystemExit(f"herald bench-serve did not advertise; stderr: {open(self.err.name).read()}")


class PacingProxy:
    """pty ↔ pty relay that releases bytes no faster than `rate` bytes/s in each direction."""

    def __init__(self, controller_path: str, link_path: str, rate: float):
        self.rate = rate
        self.controller = os.open(controller_path, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self.controller)
        master, slave = os.openpty()
        tty.setraw(slave)
        self.herald, self._slave = master, slave
        os.symlink(os.ttyname(slave), link_path)
        self.bytes = {"to-controller": 0, "to-host": 0}
        self.stop = False
        for src, dst, name in ((self.herald, self.controller, "to-controller"), (self.controller, self.herald, "to-host")):
            threading.Thread(target=self._relay, args=(src, dst, name), daemon=True).start()

    def _relay(self, src: int, dst: int, name: str):
        # Each byte leaves no earlier than the previous one's end of transmission. Bytes that were
        # already waiting when the previous batch finished continue back to back, as from a UART's
        # FIFO; only after the line ran dry does the clock restart at the next byte's arrival, so
        # idle time is never banked as credit.
        free_at = time.perf_counter()
        while not self.stop:
            r, _, _ = select.select([src], [], [], 0)
            if not r:
                r, _, _ = select.select([src], [], [], 0.2)
                if not r:
                    continue
                free_at = max(free_at, time.perf_counter())
            try:
                data = os.read(src, 4096)
            except OSError:
                return
            for i in range(0, len(data), 32):
                chunk = data[i:i + 32]
                free_at += len(chunk) / self.rate
                delay = free_at - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                os.write(dst, chunk)
                self.bytes[name] += len(chunk)


async def client(port: str, target: str, count: int, mtu: int) -> dict:
    async with await open_transport(f"serial:{port}") as (source, sink):
        device = Device.with_hci("uart-client", Address("C0:00:00:00:00:0C"), source, sink)
        await device.power_on()
        connection = await device.connect(Address(target, Address.RANDOM_DEVICE_ADDRESS), timeout=15)
        peer = Peer(connection)
        got_mtu = await peer.request_mtu(mtu) if mtu > 23 else 23
        await peer.discover_services()
        for s in peer.services:
            await peer.discover_characteristics(service=s)
        times, values = [], []
        done = asyncio.get_running_loop().create_future()

        def on_value(v):
            times.append(time.perf_counter())
            values.append(bytes(v))
            if len(times) >= count and not done.done():
                done.set_result(None)

        await peer.subscribe(find(peer, NOTIFYING), on_value)
        try:
            await asyncio.wait_for(done, 120)
        except asyncio.TimeoutError:
            pass
        await connection.disconnect()
        return {"mtu": got_mtu, "times": times, "values": values}


def misdelivered(values: list) -> int:
    """Notifications that are not the one expected at their place: `herald bench-serve` numbers them
    from 0 in their first 4 octets (little-endian) and fills the rest with zeros."""
    bad = 0
    for n, v in enumerate(values):
        head = min(4, len(v))
        if v != (n & 0xFFFFFFFF).to_bytes(4, "little")[:head] + bytes(len(v) - head):
            bad += 1
    return bad


def main():
    # A pty this process opens can become its controlling terminal; its hangup must not end the run.
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    p = argparse.ArgumentParser()
    p.add_argument("herald")
    p.add_argument("--baud", type=int, default=1_000_000)
    p.add_argument("--notifications", type=int, default=3000)
    p.add_argument("--mtu", type=int, default=247)
    p.add_argument("--size", type=int, default=0, help="notification octets (0: ATT_MTU - 3)")
    p.add_argument("--controller", choices=KINDS, default="bumble")
    args = p.parse_args()
    rate = args.baud / 10  # 8N1
    workdir = tempfile.mkdtemp(prefix="bench-uart-")
    controllers, paths = start_controllers(2, workdir, args.controller)
    acl_buffer = ACL_BUFFER[args.controller]
    procs = [controllers]
    link = os.path.join(workdir, "herald-uart")
    proxy = PacingProxy(paths[0], link, rate)
    try:
        herald = BenchServe(args.herald, link, args.notifications, args.size, workdir)
        procs.append(herald.proc)
        r = asyncio.run(client(paths[1], herald.address, args.notifications, args.mtu))
    finally:
        proxy.stop = True
        for proc in reversed(procs):
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
    times, sizes = r["times"], [len(v) for v in r["values"]]
    if len(times) < 2:
        raise SystemExit(f"bench-uart: only {len(times)} notifications arrived")
    payload = sizes[-1]
    seconds = times[-1] - times[0]
    measured = sum(sizes[1:]) / seconds
    fragments = math.ceil((payload + 3 + 4) / acl_buffer)
    wire = payload + 3 + 4 + fragments * (1 + 4)
    ideal = rate * payload / wire
    print(f"bench-uart: {args.baud} baud 8N1 ({rate:.0f} B/s each way), {args.controller} controller, LE ACL buffer {acl_buffer} octets, MTU {r['mtu']}")
    print(f"  {len(times)} notifications of {payload} octets in {seconds:.3f} s: {measured:.0f} payload B/s")
    print(f"  ideal {ideal:.0f} payload B/s ({payload}/{wire} of the line: {fragments} ACL fragment(s)); "
          f"achieved {measured / ideal * 100:.1f} % of ideal")
    print(json.dumps({"baud": args.baud, "payload": payload, "notifications": len(times), "seconds": seconds,
                      "payloadBytesPerSecond": measured, "idealPayloadBytesPerSecond": ideal,
                      "fractionOfIdeal": measured / ideal, "proxyBytes": proxy.bytes,
                      "misdelivered": misdelivered(r["values"])}, sort_keys=True))


if __name__ == "__main__":
    main()
