"""Our GATT server against Bumble's, measured by the same Bumble central on the same virtual link.

usage: python bench_vs_bumble.py HERALD_BIN [--reads N] [--notifications N] [--mtu M]
       [--controller bumble|zephyr|zephyr25]

One run starts Bumble virtual controllers on one simulated radio, `herald serve --profile test` on
the first, a Bumble server with the same profile (bumble_server.py) on the second, and a Bumble
central on the third. The central, for each server in turn: connects, exchanges the MTU, discovers
the test service, reads the 200-octet value N times (one request at a time, timed from the first
request to the last response), then subscribes to the notifying characteristic and times the
arrival of all of its notifications. Prints both servers' figures and ours as a ratio of Bumble's.
"""
import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bumble.core import UUID
from bumble.device import Device, Peer
from bumble.hci import Address
from bumble.transport import open_transport

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "Tests" / "Interop"))
from radio import DESCRIPTIONS, KINDS, ZephyrRadio, is_zephyr  # noqa: E402
LONG = UUID("4c4d0002-7e57-4e3a-9d8c-5a1f3c2b1a00")
NOTIFYING = UUID("4c4d0004-7e57-4e3a-9d8c-5a1f3c2b1a00")


class RadioProcess:
    """A `radio.ZephyrRadio` where the benchmarks expect a process (terminate, wait, kill)."""

    def __init__(self, radio):
        self.radio = radio

    def terminate(self):
        self.radio.close()

    def wait(self, timeout=None):
        return 0

    def kill(self):
        self.radio.close()


def start_controllers(count: int, workdir: str, kind: str = "bumble"):
    """`count` controllers on one radio: Bumble's virtual ones, or Zephyr's link layer (`zephyr`
    3.0.99, `zephyr25` 2.5.0) on the simulated nRF52 (Tests/Interop/radio.py)."""
    if is_zephyr(kind):
        radio = ZephyrRadio(count, kind=kind)
        return RadioProcess(radio), radio.paths
    paths = [os.path.join(workdir, f"hci{i}") for i in range(count)]
    log = open(os.path.join(workdir, "controllers.log"), "w")
    proc = subprocess.Popen([sys.executable, str(HERE.parents[1] / "Tests" / "Interop" / "peers" / "controllers.py")] + [f"pty:{p}" for p in paths],
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 20
    while not all(os.path.exists(p) for p in paths):
        if proc.poll() is not None or time.time() > deadline:
            raise SystemExit(f"bumble controllers did not start: {open(log.name).read()}")
        time.sleep(0.05)
    return proc, paths


class Herald:
    """`herald serve --profile test --json-events` in the background."""

    def __init__(self, binary: str, port: str, count: int, workdir: str):
        self.err = open(os.path.join(workdir, "herald.err"), "w")
        self.proc = subprocess.Popen([binary, "serve", "--transport", f"tty:{port}", "--profile", "test",
                                      "--notify-count", str(count), "--name", "herald-bench", "--json-events"],
                                     stdout=subprocess.PIPE, stderr=self.err, text=True)
        self.address = None
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self.ready.wait(30):
            raise SystemExit(f"herald serve did not advertise; stderr: {open(self.err.name).read()}")

    def _read(self):
        for line in self.proc.stdout:
            try:
                e = json.loads(line)
            except json.JSONDecodeError:
                continue
            if e.get("event") == "advertising" and not self.ready.is_set():
                self.address = e["address"]
                self.ready.set()


def start_bumble_server(port: str, own: str, count: int, workdir: str):
    err = open(os.path.join(workdir, "bumble_server.err"), "w")
    proc = subprocess.Popen([sys.executable, str(HERE / "bumble_server.py"), f"serial:{port}", own, str(count)],
                            stdout=subprocess.PIPE, stderr=err, text=True)
    line = proc.stdout.readline()
    if not line.startswith("ready"):
        raise SystemExit(f"bumble server did not start: {open(err.name).read()}")
    return proc


def find(peer: Peer, uuid: UUID):
    for s in peer.services:
        for c in s.characteristics:
            if c.uuid == uuid:
                return c
    raise KeyError(str(uuid))


async def measure(device: Device, target: str, reads: int, notifications: int, mtu: int) -> dict:
    connection = await device.connect(Address(target, Address.RANDOM_DEVICE_ADDRESS), timeout=10)
    peer = Peer(connection)
    got_mtu = await peer.request_mtu(mtu) if mtu > 23 else 23
    await peer.discover_services()
    for s in peer.services:
        await peer.discover_characteristics(service=s)
    long_char, notifying = find(peer, LONG), find(peer, NOTIFYING)
    value = await peer.read_value(long_char)  # warm-up, and a check
    assert len(value) == 200, f"read {len(value)} octets, expected 200"
    t = time.perf_counter()
    for _ in range(reads):
        await peer.read_value(long_char)
    read_seconds = time.perf_counter() - t

    received = 0
    done = asyncio.get_running_loop().create_future()

    def on_value(v):
        nonlocal received
        received += 1
        if received >= notifications and not done.done():
            done.set_result(None)

    t = time.perf_counter()
    await peer.subscribe(notifying, on_value)
    try:
        await asyncio.wait_for(done, 60)
    except asyncio.TimeoutError:
        pass
    notify_seconds = time.perf_counter() - t
    await connection.disconnect()
    await asyncio.sleep(0.2)
    return {"mtu": got_mtu, "reads": reads, "readSeconds": read_seconds, "readsPerSecond": reads / read_seconds,
            "usPerRead": read_seconds / reads * 1e6, "notifications": received,
            "notifySeconds": notify_seconds, "notificationsPerSecond": received / notify_seconds}


async def central(port: str, targets: dict, args) -> dict:
    async with await open_transport(f"serial:{port}") as (source, sink):
        device = Device.with_hci("bench-central", Address("C0:00:00:00:00:0C"), source, sink)
        await device.power_on()
        results = {}
        for name, address in targets.items():
            results[name] = await measure(device, address, args.reads, args.notifications, args.mtu)
        return results


def main():
    # A pty this process opens can become its controlling terminal; its hangup must not end the run.
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    p = argparse.ArgumentParser()
    p.add_argument("herald")
    p.add_argument("--reads", type=int, default=1000)
    p.add_argument("--notifications", type=int, default=2000)
    p.add_argument("--mtu", type=int, default=247)
    p.add_argument("--controller", choices=KINDS, default="bumble")
    args = p.parse_args()
    workdir = tempfile.mkdtemp(prefix="bench-vs-bumble-")
    controllers, paths = start_controllers(3, workdir, args.controller)
    procs = [controllers]
    try:
        herald = Herald(args.herald, paths[0], args.notifications, workdir)
        procs.append(herald.proc)
        procs.append(start_bumble_server(paths[1], "C0:00:00:00:00:0B", args.notifications, workdir))
        results = asyncio.run(central(paths[2], {"herald": herald.address, "bumble": "C0:00:00:00:00:0B"}, args))
    finally:
        for proc in reversed(procs):
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
    h, b = results["herald"], results["bumble"]
    where = DESCRIPTIONS[args.controller]
    print(f"bench-vs-bumble: Bumble central, {where}, MTU {h['mtu']}")
    print(f"  200-octet reads x{args.reads}:   herald {h['readsPerSecond']:8.0f}/s ({h['usPerRead']:.0f} us/read)   "
          f"bumble {b['readsPerSecond']:8.0f}/s ({b['usPerRead']:.0f} us/read)   ratio {h['readsPerSecond'] / b['readsPerSecond']:.2f}")
    print(f"  notifications x{args.notifications}: herald {h['notificationsPerSecond']:8.0f}/s ({h['notifications']} received)   "
          f"bumble {b['notificationsPerSecond']:8.0f}/s ({b['notifications']} received)   "
          f"ratio {h['notificationsPerSecond'] / b['notificationsPerSecond']:.2f}")
    print(json.dumps(results, sort_keys=True))


if __name__ == "__main__":
    main()
