"""The core on a microcontroller: firmware images (Embedded Swift) running under QEMU, on mps2-an386
(Cortex-M4) and on the micro:bit (nRF51822, Cortex-M0), talking HCI over their UART to a Bumble
virtual controller, and Bumble peers reading what they serve over the simulated radio."""
import asyncio
import json
import os
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "Tools" / "firmware"
OUT = ROOT / ".build" / "firmware"
HERALD_SERVICE = "428132af-4746-42d3-801e-4572d65bfd9b"
PAYLOAD_CHARACTERISTIC = "3e98c0f8-8f05-4829-a121-43e38f8933e7"
# The 128-bit service UUID as it appears in advertising data (little-endian).
HERALD_SERVICE_LE = bytes.fromhex(HERALD_SERVICE.replace("-", ""))[::-1]


def ensure_qemu() -> None:
    if shutil.which("qemu-system-arm"):
        return
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(sudo + ["apt-get", "update", "-qq"], env=env, capture_output=True)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "qemu-system-arm"],
                   env=env, capture_output=True)
    if not shutil.which("qemu-system-arm"):
        pytest.skip("qemu-system-arm is not installed and could not be installed with apt-get")


STATIC_RAM: dict[str, int] = {}
# Issue 37's budgets for RAM all in (static + stack value + the larger stack peak): the beacon 4 KB
# and the wearable 12 KB on either board (on the micro:bit, 4 KB of the chip's 16 KB left to an
# application). An image that is over, or whose measured runs come within a few dozen octets of it,
# is held instead to its static estimate (`Tools/firmware build`: the deepest static main-loop path
# or the measured start-up, whichever is larger), so that it cannot grow unnoticed while the test
# stays deterministic. None is now: the micro:bit beacon measures 3,908 B running (estimate 3,936 B)
# and the micro:bit wearable 11,804-11,920 B (estimate 12,220 B), so every image is held to its
# budget. Put an image back here, at its estimate, should it come that close again.
RAM_BUDGET = {"beacon": 4096, "wearable": 12288}
RAM_CEILING: dict[str, int] = {}


@pytest.fixture(scope="session")
def firmware_images() -> Path:
    ensure_qemu()
    out = subprocess.run([str(FIRMWARE), "build"], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stderr[-3000:]
    print(out.stdout)
    for line in out.stdout.splitlines():
        if "static RAM" in line:
            STATIC_RAM[line.split(":")[0]] = int(line.split("static RAM ")[1].split()[0])
    return OUT


class Firmware:
    """One image running in QEMU (via `Tools/firmware qemu`), its log UART collected line by line."""

    def __init__(self, image: str, pty: str):
        self.started = time.monotonic()
        self.image = image
        self.proc = subprocess.Popen([str(FIRMWARE), "qemu", image, pty], cwd=ROOT, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.lines: list[str] = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append(line.rstrip("\r\n"))
                self.cond.notify_all()

    def wait_for(self, prefix: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    if line.startswith(prefix):
                        return line
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise AssertionError(f"no line starting {prefix!r}; log:\n" + "\n".join(self.lines))
                self.cond.wait(min(left, 0.5))

    def last(self, prefix: str) -> str | None:
        with self.cond:
            return next((line for line in reversed(self.lines) if line.startswith(prefix)), None)

    def ram_all_in(self) -> int | None:
        """RAM all in with the measured peaks so far, or None before the main loop's first line."""
        value, start, loop = (self.last(p) for p in ("memory reserved stack_value=", "memory start-up", "memory stack_peak="))
        if not (value and start and loop and self.image in STATIC_RAM):
            return None
        peak = max(int(field(start, "stack_peak")), int(field(loop, "stack_peak")))
        return STATIC_RAM[self.image] + int(field(value, "stack_value")) + peak

    def assert_still_running_within_budget(self) -> None:
        """The end of every firmware test: the image is still running (a stack overflow after the
        exchange locks QEMU up and ends it; the exchange's assertions alone would pass), said nothing
        fatal, and its measured RAM all in is within the image's budget."""
        time.sleep(2.5)  # one more memory line: the stack peak after the exchange
        # The main loop's memory line comes every 2 s of the board's clock, which runs slow under
        # load (a micro:bit's first one came late once): the peak is monotonic, so any line will do.
        self.wait_for("memory stack_peak=", timeout=15)
        with self.cond:
            log = "\n".join(self.lines)
        assert self.proc.poll() is None, f"{self.image} stopped (QEMU exited {self.proc.returncode}); log:\n{log}"
        assert "fatal:" not in log, log
        total = self.ram_all_in()
        assert total is not None, f"no memory lines from {self.image}; log:\n{log}"
        budget = RAM_BUDGET[self.image.split("@")[0]]
        ceiling = RAM_CEILING.get(self.image, budget)
        assert total <= ceiling, \
            f"{self.image}: RAM all in {total} B, over its {ceiling} B " + ("budget" if ceiling == budget else f"ceiling (budget {budget} B)")

    def close(self) -> None:
        # The whole log UART, shown by pytest when the test failed.
        with self.cond:
            print(f"--- {self.image} log ---\n" + "\n".join(self.lines))
        for prefix in ("memory start-up", "memory reserved stack_value=", "memory stack_peak=", "advertising t="):
            line = self.last(prefix)
            if line:
                print(f"{self.image}: {line}")
        # RAM all in, as Firmware/README.md measures it, with the main loop's measured peak.
        total = self.ram_all_in()
        if total is not None:
            value, start, loop = (self.last(p) for p in ("memory reserved stack_value=", "memory start-up", "memory stack_peak="))
            peak = max(int(field(start, "stack_peak")), int(field(loop, "stack_peak")))
            print(f"{self.image}: RAM all in {total} B = static {STATIC_RAM[self.image]} + stack value "
                  f"{field(value, 'stack_value')} + stack peak {peak} (measured)")
        try:
            os.killpg(self.proc.pid, 15)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)


def provisioned_payload() -> bytes:
    """The venue payload the beacon image serves from flash: the default build's (big-endian codes)
    array in Firmware/Beacon/venue_payload.c, which FirmwareBeaconConstantsTests generates with the
    core's builder and keeps in step. The image no longer logs it: a provisioned device does not."""
    text = (ROOT / "Firmware" / "Beacon" / "venue_payload.c").read_text()
    body = re.search(r"static const uint8_t payload\[\d+\] = \{(.*?)\};", text, re.S).group(1)
    return bytes(int(b, 16) for b in re.findall(r"0x[0-9a-f]{2}", body))


def field(line: str, name: str) -> str:
    """A field of a log line: `name=value` words, or a key of an event's JSON object."""
    if line.startswith("{"):
        event = json.loads(line)
        assert name in event, f"no {name} in {line!r}"
        return str(event[name])
    for part in line.split():
        if part.startswith(name + "="):
            return part[len(name) + 1:]
    raise AssertionError(f"no {name}= in {line!r}")


async def find_and_read(path: str, phone_payload: bytes | None = None, timeout: float = 60, stay=None):
    """A Bumble 'phone' on the controller at `path`: optionally advertises the Herald service and
    serves `phone_payload`, scans for a Herald advertiser, connects, and reads its payload
    characteristic. Then runs `stay` (a blocking callable, in a thread) with the phone still on air.
    Returns (advertiser address, payload bytes, seconds until the advert was seen, stay's result)."""
    from bumble.core import UUID, AdvertisingData
    from bumble.device import Device, Peer
    from bumble.gatt import Characteristic, Service
    from bumble.hci import Address
    from bumble.transport import open_transport

    async with await open_transport(f"serial:{path}") as (source, sink):
        device = Device.with_hci("phone", Address("F0:F1:F2:F3:F4:F5"), source, sink)
        if phone_payload is not None:
            device.add_service(Service(UUID(HERALD_SERVICE), [
                Characteristic(UUID(PAYLOAD_CHARACTERISTIC), Characteristic.Properties.READ,
                               Characteristic.READABLE, phone_payload)]))
        await device.power_on()
        if phone_payload is not None:
            device.advertising_data = bytes(AdvertisingData([
                (AdvertisingData.FLAGS, bytes([0x06])),
                (AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS, HERALD_SERVICE_LE),
            ]))
            await device.start_advertising(auto_restart=True)
        started = time.monotonic()
        found: asyncio.Future = asyncio.get_running_loop().create_future()

        def on_advertisement(advertisement):
            if HERALD_SERVICE_LE in bytes(advertisement.data) and not found.done():
                found.set_result((advertisement.address, time.monotonic() - started))

        device.on("advertisement", on_advertisement)
        await device.start_scanning(active=False)
        address, seen_after = await asyncio.wait_for(found, timeout)
        await device.stop_scanning()
        connection = await asyncio.wait_for(device.connect(address), 30)
        peer = Peer(connection)
        await asyncio.wait_for(peer.discover_services([UUID(HERALD_SERVICE)]), 30)
        services = peer.get_services_by_uuid(UUID(HERALD_SERVICE))
        assert services, "Herald service not found on the firmware"
        await services[0].discover_characteristics()
        characteristics = services[0].get_characteristics_by_uuid(UUID(PAYLOAD_CHARACTERISTIC))
        assert characteristics, "payload characteristic not found on the firmware"
        value = await asyncio.wait_for(characteristics[0].read_value(), 30)
        await connection.disconnect()
        stayed = await asyncio.to_thread(stay) if stay else None
        return str(address), bytes(value), seen_after, stayed


@pytest.mark.timeout(600)
@pytest.mark.parametrize("image", ["beacon", "beacon@microbit"])
def test_beacon_firmware_serves_venue_payload(firmware_images, controllers, image):
    """The beacon on each board: mps2-an386 (Cortex-M4, CMSDK UART) and the micro:bit (nRF51822,
    Cortex-M0, 16 KB RAM, HCI on the nRF5 UART). A Bumble phone finds it and reads its payload."""
    ctl = controllers(2)
    fw = Firmware(image, ctl.paths[0])
    try:
        ready = fw.wait_for("ready ")
        advertising = fw.wait_for("advertising ")
        expected = provisioned_payload()
        address, value, seen_after, _ = asyncio.run(find_and_read(ctl.paths[1]))
        print(f"{image}: {ready}; {advertising}; advert seen by the phone {seen_after:.2f}s after it began scanning;"
              f" wall time from QEMU start to read {time.monotonic() - fw.started:.1f}s")
        # The phone connected to the address the firmware chose at bring-up.
        assert address.split("/")[0].upper() == field(ready, "address").upper()
        # Venue beacon payload: protocol 0x30, country 826, state 4 (big-endian), location code.
        assert value == expected
        assert value[0] == 0x30
        assert int.from_bytes(value[1:3], "big") == 826
        assert int.from_bytes(value[3:5], "big") == 4
        assert int.from_bytes(value[5:9], "big") == 0x0001E240
        assert b"Herald Cafe" in value[9:]
        fw.wait_for('{"event":"payload-read"')
        fw.assert_still_running_within_budget()
    finally:
        fw.close()


@pytest.mark.timeout(600)
@pytest.mark.parametrize("image", ["wearable", "wearable@microbit"])
def test_wearable_firmware_and_phone_find_each_other(firmware_images, controllers, image):
    """The whole sensor on each board (on the micro:bit, in the chip's 16 KB): a phone reads the
    wearable and the wearable reads the phone."""
    ctl = controllers(2)
    fw = Firmware(image, ctl.paths[0])
    try:
        advertising = fw.wait_for("advertising ")
        rpa = field(fw.wait_for('{"address":'), "address")
        phone_payload = bytes.fromhex("1003" "3a00" "04") + bytes(range(16))
        # The phone stays on air until the wearable has read it back.
        address, value, _, did_read = asyncio.run(find_and_read(
            ctl.paths[1], phone_payload=phone_payload, stay=lambda: fw.wait_for('{"event":"didRead"', timeout=60)))
        # The phone read the wearable's current Simple payload: protocol 0x10..0x17, header, 16-byte
        # contact identifier, exactly what the firmware says it served.
        share = fw.wait_for('{"event":"payload-read"')
        assert value == bytes.fromhex(field(share, "payload"))
        assert len(value) == 21 and 0x10 <= value[0] <= 0x17
        assert int.from_bytes(value[1:3], "big") == 826
        assert value[5:] != bytes(16)
        # It advertised from its resolvable private address (top bits 01, Core 5.4 Vol 6 Part B 1.3.2.2).
        assert address.split("/")[0].upper() == rpa.upper()
        assert int(rpa[:2], 16) >> 6 == 0b01
        # And the wearable, scanning, detected the phone advertising the Herald service.
        detect = fw.wait_for('{"event":"didDetect"', timeout=30)
        print(f"{image}: {advertising}; {detect}; {did_read}")
        # The wearable, as central, found the phone's Herald service and read its payload.
        assert bytes.fromhex(field(did_read, "payload")) == phone_payload
        fw.assert_still_running_within_budget()
    finally:
        fw.close()


async def advertise_and_serve(path: str, phone_payload: bytes, stay):
    """A Bumble 'phone' that only advertises the Herald service and serves `phone_payload` (it never
    connects itself), on air while `stay` (blocking, in a thread) runs. Returns stay's result."""
    from bumble.core import UUID, AdvertisingData
    from bumble.device import Device
    from bumble.gatt import Characteristic, Service
    from bumble.hci import Address
    from bumble.transport import open_transport

    async with await open_transport(f"serial:{path}") as (source, sink):
        device = Device.with_hci("phone", Address("F0:F1:F2:F3:F4:F6"), source, sink)
        device.add_service(Service(UUID(HERALD_SERVICE), [
            Characteristic(UUID(PAYLOAD_CHARACTERISTIC), Characteristic.Properties.READ,
                           Characteristic.READABLE, phone_payload)]))
        await device.power_on()
        device.advertising_data = bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS, HERALD_SERVICE_LE),
        ]))
        await device.start_advertising(auto_restart=True)
        return await asyncio.to_thread(stay)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("image", ["wearable", "wearable@microbit"])
def test_wearable_firmware_connects_to_a_phone_and_reads_it(firmware_images, controllers, image):
    """The sensor's central half on its own: the phone never connects, so the wearable must detect
    it, connect as central, discover the Herald service and read the payload over its own link."""
    ctl = controllers(2)
    fw = Firmware(image, ctl.paths[0])
    try:
        fw.wait_for('{"event":"didUpdateState","sensor":"ble","state":"on"')
        phone_payload = bytes.fromhex("1003" "3a00" "04") + bytes(range(32, 48))
        did_read = asyncio.run(advertise_and_serve(ctl.paths[1], phone_payload,
                                                   stay=lambda: fw.wait_for('{"event":"didRead"', timeout=60)))
        assert bytes.fromhex(field(did_read, "payload")) == phone_payload
        assert field(fw.wait_for('{"event":"connected"'), "role") == "central"
        detect = fw.wait_for('{"event":"didDetect"')
        print(f"{image} as central: {detect}; {did_read}")
        fw.assert_still_running_within_budget()
    finally:
        fw.close()
