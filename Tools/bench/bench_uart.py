"""Notification throughput from our GATT server through a UART paced at a real baud rate.

usage: python bench_uart.py HERALD_BIN [--baud 1000000] [--notifications N] [--mtu M] [--size S]
           [--controller bumble|zephyr] [--phy 1m|2m] [--data-length 27..251] [--interval UNITS] [--table]
           [--direction notify|write]

--direction write measures the other way: `herald bench-write` (our GATT client, on the paced line)
sends Write Commands of ATT_MTU - 3 octets to a Bumble GATT server on the second controller, which
times their arrival, first to last.

--phy, --data-length and --interval go to `herald bench-serve` (the PHY it moves the link to, the LL
data length it asks for, the connection interval in 1.25 ms units it asks the central for once
subscribed; 0 keeps the central's). --table runs 1M/2M x 27/251 octets x 7.5/15/30 ms and prints the
README's markdown table.

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

from bumble.core import UUID, AdvertisingData
from bumble.gatt import Characteristic, CharacteristicValue, Service
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

    def __init__(self, binary: str, port: str, count: int, size: int, workdir: str, extra=()):
        self.err = open(os.path.join(workdir, "herald.err"), "w")
        self.proc = subprocess.Popen([binary, "bench-serve", "--transport", f"tty:{port}", "--notify-count", str(count),
                                      "--notify-size", str(size), *extra], stdout=subprocess.PIPE, stderr=self.err, text=True)
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


WRITE_SERVICE = UUID("4c4d0101-7e57-4e3a-9d8c-5a1f3c2b1a00")
WRITABLE = UUID("4c4d0102-7e57-4e3a-9d8c-5a1f3c2b1a00")


async def write_server(port: str, herald: str, link: str, count: int, size: int, extra, workdir: str) -> dict:
    """A Bumble GATT server with one Write Without Response characteristic; starts `herald bench-write`
    at it and times the Write Commands' arrival."""
    async with await open_transport(f"serial:{port}") as (source, sink):
        own = "C0:00:00:00:00:0D"
        device = Device.with_hci("uart-server", Address(own), source, sink)
        times, sizes = [], []
        done = asyncio.get_running_loop().create_future()

        def on_write(connection, value):
            times.append(time.perf_counter())
            sizes.append(len(value))
            if len(times) >= count and not done.done():
                done.set_result(None)

        writable = Characteristic(WRITABLE, Characteristic.Properties.WRITE_WITHOUT_RESPONSE, Characteristic.WRITEABLE,
                                  CharacteristicValue(write=on_write))
        device.add_service(Service(WRITE_SERVICE, [writable]))
        device.advertising_data = bytes(AdvertisingData([(AdvertisingData.FLAGS, bytes([0x06]))]))
        await device.power_on()
        await device.start_advertising(auto_restart=False)
        err = open(os.path.join(workdir, "herald.err"), "w")
        proc = subprocess.Popen([herald, "bench-write", "--transport", f"tty:{link}", "--connect", own,
                                 "--attribute", str(writable.handle), "--count", str(count), "--size", str(size), *extra],
                                stdout=subprocess.PIPE, stderr=err, text=True)
        try:
            await asyncio.wait_for(done, 120)
        except asyncio.TimeoutError:
            pass
        finally:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
        return {"mtu": (max(sizes) + 3) if sizes else 0, "times": times, "sizes": sizes}


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
    p.add_argument("--phy", choices=["1m", "2m"], default="2m")
    p.add_argument("--data-length", type=int, default=251)
    p.add_argument("--interval", type=int, default=6, help="1.25 ms units asked of the central; 0 keeps its own")
    p.add_argument("--table", action="store_true", help="the README table: 1M/2M x 27/251 x 7.5/15/30 ms")
    p.add_argument("--direction", choices=["notify", "write"], default="notify")
    args = p.parse_args()
    if not args.table:
        measure(args)
        return
    rows = []
    for phy in ("1m", "2m"):
        for octets in (27, 251):
            cells = []
            for interval in (6, 12, 24):
                args.phy, args.data_length, args.interval = phy, octets, interval
                r = measure(args)
                cells.append(f"{r['payloadBytesPerSecond'] / 1000:.1f} kB/s ({r['fractionOfIdeal'] * 100:.0f} %)")
            rows.append(f"| LE {phy.upper()} | {octets} | " + " | ".join(cells) + " |")
    what = "notifications" if args.direction == "notify" else "Write Commands"
    print(f"\n{args.controller} controller, {args.baud} baud 8N1, {args.notifications} {what} of "
          f"{args.mtu - 3 if args.size == 0 else args.size} octets (ATT_MTU {args.mtu}); payload B/s and % of the line's ideal:\n")
    print("| PHY | LL data length (octets) | 7.5 ms | 15 ms | 30 ms |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))


def measure(args) -> dict:
    rate = args.baud / 10  # 8N1
    workdir = tempfile.mkdtemp(prefix="bench-uart-")
    controllers, paths = start_controllers(2, workdir, args.controller)
    acl_buffer = ACL_BUFFER[args.controller]
    procs = [controllers]
    link = os.path.join(workdir, "herald-uart")
    proxy = PacingProxy(paths[0], link, rate)
    try:
        extra = ["--phy", args.phy, "--data-length", str(args.data_length), "--interval", str(args.interval)]
        if args.direction == "write":
            if args.interval == 0:
                extra[-1] = "24"  # a central picks an interval: 30 ms, the usual default
            r = asyncio.run(write_server(paths[1], args.herald, link, args.notifications, args.size, extra, workdir))
        else:
            herald = BenchServe(args.herald, link, args.notifications, args.size, workdir, extra)
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
    times = r["times"]
    sizes = [len(v) for v in r["values"]] if "values" in r else r["sizes"]
    if len(times) < 2:
        raise SystemExit(f"bench-uart: only {len(times)} {args.direction == 'write' and 'Write Commands' or 'notifications'} arrived; "
                         f"herald stderr: {open(os.path.join(workdir, 'herald.err')).read()[-500:]}")
    payload = sizes[-1]
    seconds = times[-1] - times[0]
    measured = sum(sizes[1:]) / seconds
    fragments = math.ceil((payload + 3 + 4) / acl_buffer)
    wire = payload + 3 + 4 + fragments * (1 + 4)
    ideal = rate * payload / wire
    print(f"bench-uart: {args.baud} baud 8N1 ({rate:.0f} B/s each way), {args.controller} controller, LE ACL buffer {acl_buffer} octets, MTU {r['mtu']}, "
          f"PHY {args.phy.upper()}, LL {args.data_length} octets, "
          + (f"interval {args.interval * 1.25:g} ms asked" if args.interval else "the central's interval"))
    print(f"  {len(times)} {'Write Commands' if args.direction == 'write' else 'notifications'} of {payload} octets in {seconds:.3f} s: {measured:.0f} payload B/s")
    print(f"  ideal {ideal:.0f} payload B/s ({payload}/{wire} of the line: {fragments} ACL fragment(s)); "
          f"achieved {measured / ideal * 100:.1f} % of ideal")
    result = {"baud": args.baud, "payload": payload, "notifications": len(times), "seconds": seconds,
              "payloadBytesPerSecond": measured, "idealPayloadBytesPerSecond": ideal,
              "fractionOfIdeal": measured / ideal, "proxyBytes": proxy.bytes,
              "phy": args.phy, "dataLength": args.data_length, "interval": args.interval, "direction": args.direction}
    # Notifications carry their number (bench-serve); Write Commands are only counted.
    if "values" in r:
        result["misdelivered"] = misdelivered(r["values"])
    print(json.dumps(result, sort_keys=True))
    return result


if __name__ == "__main__":
    main()
