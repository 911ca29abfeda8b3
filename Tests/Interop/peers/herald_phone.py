"""A Bumble host that behaves like a phone running a Herald app, for the wearable interop tests.

usage: python herald_phone.py TRANSPORT ADDRESS KIND PAYLOAD_HEX [--read] [--advertise-while-connected]

KIND:
  android  advertises the Herald service UUID and a pseudo device address (manufacturer data 0xFFFA,
           6 octets); serves the payload characteristic and the write-only signal characteristic.
  iphone   advertises only Apple manufacturer data (company 0x004C), as a backgrounded iOS app does;
           the Herald service (payload + write-and-notify signal characteristic) is found only by
           GATT discovery.
  plain    advertises a name; serves no Herald service (the wearable must back off from it).

Prints "advertising" when ready, then one line per event: "connected <peer> <t>",
"disconnected <peer> <t>", "read payload <t>", "signal <hex> <t>" (t: seconds since ready).

--read: the phone's Herald app is a central too, as on a real phone: it scans (passively), and connects
to every address whose advert carries the Herald service UUID, discovers the service, reads the payload
characteristic (Read, then Read Blob past ATT_MTU 23) and disconnects, once per address (an address
that failed is tried again 2 s later, at most 5 times). It prints "heard <address> <t>" at an address's
first advert, "got <address> <payload hex> <t>" for each payload read and "failed <address> <why> <t>";
"incoming <peer> during <address> <t>" when a central connected to the phone while it was connecting.
Zephyr's controller refuses LE Create Connection while scanning, so the scan stops for each read.

--advertise-while-connected: advertising is enabled again as soon as a central connects, as a real phone
does, so that several centrals can be linked to the phone at once. Without it the phone advertises again
only when its link ends (Bumble's `auto_restart`), so it serves one central at a time: harsher than a
phone, which the interop tests keep. Android's advertising manager enables an undirected set again when
the controller ends it for a connection (`BleAdvertisingManagerImpl::OnAdvertisingSetTerminated`,
`stack/btm/btm_ble_multi_adv.cc`).
"""
import asyncio
import sys
import time

from bumble.att import Attribute
from bumble.core import UUID, AdvertisingData
from bumble.device import Device, Peer
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble.hci import (Address, HCI_LE_Create_Connection_Cancel_Command, HCI_LE_Set_Advertising_Enable_Command,
                        OwnAddressType, Role)
from bumble.transport import open_transport

HERALD_SERVICE = UUID("428132af-4746-42d3-801e-4572d65bfd9b")
PAYLOAD = UUID("3e98c0f8-8f05-4829-a121-43e38f8933e7")
ANDROID_SIGNAL = UUID("f617b813-092e-437a-8324-e09a80821a11")
IOS_SIGNAL = UUID("0eb0d5f2-eae4-4a9a-8af3-a4adb02d4363")
BATTERY_SERVICE = UUID.from_16_bits(0x180F)
BATTERY_LEVEL = UUID.from_16_bits(0x2A19)

start = time.monotonic()


def say(*words: str) -> None:
    print(*words, f"{time.monotonic() - start:.3f}", flush=True)


async def main(transport: str, address: str, kind: str, payload: bytes, read: bool = False,
               advertise_while_connected: bool = False) -> None:
    async with await open_transport(transport) as (source, sink):
        device = Device.with_hci(f"herald-{kind}", Address(address), source, sink)

        def read_payload(connection):
            say("read", "payload")
            return payload

        def write_signal(connection, value):
            say("signal", bytes(value).hex())

        if kind == "android":
            signal = Characteristic(ANDROID_SIGNAL, Characteristic.Properties.WRITE, Attribute.WRITEABLE,
                                    CharacteristicValue(write=write_signal))
        else:
            signal = Characteristic(IOS_SIGNAL, Characteristic.Properties.WRITE | Characteristic.Properties.NOTIFY,
                                    Attribute.WRITEABLE, CharacteristicValue(write=write_signal))
        if kind in ("android", "iphone"):
            device.add_service(Service(HERALD_SERVICE, [
                signal,
                Characteristic(PAYLOAD, Characteristic.Properties.READ, Attribute.READABLE,
                               CharacteristicValue(read=read_payload)),
            ]))
        else:
            device.add_service(Service(BATTERY_SERVICE, [
                Characteristic(BATTERY_LEVEL, Characteristic.Properties.READ, Attribute.READABLE, bytes([80])),
            ]))
        device.on("connection", lambda c: (say("connected", str(c.peer_address)),
                                           c.on("disconnection", lambda reason: say("disconnected", str(c.peer_address)))))
        await device.power_on()
        if kind == "android":
            # Pseudo device address: 6 random octets after manufacturer ID 0xFFFA (little-endian).
            pseudo = bytes.fromhex(address.replace(":", ""))[::-1]
            fields = [
                (AdvertisingData.FLAGS, bytes([0x06])),
                (AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS, HERALD_SERVICE.to_bytes(force_128=True)),
                (AdvertisingData.MANUFACTURER_SPECIFIC_DATA, bytes([0xFA, 0xFF]) + pseudo),
            ]
        elif kind == "iphone":
            # What a backgrounded iOS app leaves in the advert: Apple's manufacturer data (the
            # "overflow area" form, type 0x01, one bit per hashed service UUID), no service UUID.
            # The bits are those of an iPhone SE running Herald in the background (herald-for-android
            # BLEDeviceFilterTest); an all-zero area means no app advertises, and the reference
            # apps' device filter, like ours, ignores it.
            fields = [
                (AdvertisingData.FLAGS, bytes([0x1A])),
                (AdvertisingData.MANUFACTURER_SPECIFIC_DATA,
                 bytes([0x4C, 0x00, 0x01]) + bytes.fromhex("00000000000000000020000000000000")),
            ]
        else:
            fields = [
                (AdvertisingData.FLAGS, bytes([0x06])),
                (AdvertisingData.COMPLETE_LOCAL_NAME, b"plain-sensor"),
            ]
        device.advertising_data = bytes(AdvertisingData(fields))
        # The Herald Android app advertises with ADVERTISE_MODE_BALANCED (ConcreteBLETransmitter), an
        # interval of about 250 ms; Bumble's default is 1 s. The others keep Bumble's.
        interval = 250 if kind == "android" else None
        await device.start_advertising(auto_restart=not advertise_while_connected,
                                       advertising_interval_min=interval, advertising_interval_max=interval)
        if advertise_while_connected:
            advertiser = device.legacy_advertiser
            # Again after each link that a central made, and after each link's end (a controller at its
            # limit of links may have refused the first).
            device.on("connection", lambda c: c.role == Role.PERIPHERAL and (
                asyncio.ensure_future(advertise_again(device, advertiser)),
                c.on("disconnection", lambda reason: asyncio.ensure_future(advertise_again(device, advertiser)))))
        say("advertising")
        if read:
            await read_herald_devices(device)
        await asyncio.get_running_loop().create_future()


async def advertise_again(device: Device, advertiser) -> None:
    """Enables the phone's advertising again after the controller ended it for a link (Core 5.4 Vol 6
    Part B 4.4.2: a connectable advertiser stops when a CONNECT_IND is taken). Enabling an enabled
    advertiser is no error (Vol 4 Part E 7.8.9), so this is safe to send at any time. With legacy
    commands Bumble drops its advertiser at each link (`auto_restart` off); it is put back, since
    Bumble takes the own address type of the next link from it."""
    if device.legacy_advertising_set is not None:
        await device.legacy_advertising_set.start()
    else:
        device.legacy_advertiser = advertiser
        response = await device.send_command(HCI_LE_Set_Advertising_Enable_Command(advertising_enable=1))
        status = int(response.return_parameters.status)
        if status != 0:
            say("advertising-refused", f"0x{status:02x}")


async def read_herald_devices(device: Device) -> None:
    """The --read central (see the module's doc): runs for ever."""
    heard: dict[str, object] = {}   # address -> Bumble's Address, in the order first heard
    tries: dict[str, int] = {}
    done: set[str] = set()
    due: dict[str, float] = {}      # address -> earliest next try
    wake = asyncio.Event()

    def on_advertisement(advertisement):
        data = advertisement.data
        uuids = [u for t in (AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS,
                             AdvertisingData.INCOMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS)
                 for u in (data.get(t) or [])]
        address = str(advertisement.address)
        if HERALD_SERVICE in uuids and address not in heard:
            heard[address] = advertisement.address
            say("heard", address)
            wake.set()

    device.on("advertisement", on_advertisement)
    while True:
        try:
            await device.start_scanning(active=False, filter_duplicates=False)
            now = time.monotonic()
            ready = [a for a in heard if a not in done and tries.get(a, 0) < 5 and due.get(a, 0) <= now]
            while not ready:
                wake.clear()
                try:
                    await asyncio.wait_for(wake.wait(), 0.5)
                except asyncio.TimeoutError:
                    pass
                now = time.monotonic()
                ready = [a for a in heard if a not in done and tries.get(a, 0) < 5 and due.get(a, 0) <= now]
            await device.stop_scanning()
        except Exception as error:  # a refused scan command: said, and tried again in a second
            say("error", type(error).__name__, str(error).replace(" ", "-")[:120])
            await asyncio.sleep(1)
            continue
        address = ready[0]
        tries[address] = tries.get(address, 0) + 1
        try:
            payload = await read_payload_of(device, heard[address])
            done.add(address)
            say("got", address, payload.hex())
        except (Exception, asyncio.CancelledError) as error:  # reported and retried; the phone goes on
            due[address] = time.monotonic() + 2
            say("failed", address, str(error).replace(" ", "-")[:120] or type(error).__name__)


async def read_payload_of(device: Device, address) -> bytes:
    """Connects, reads the payload and disconnects; fails as soon as the peer ends the link (Bumble's
    pending ATT request would wait for its 30 s timeout) or after 10 s."""
    connection = await connect_as_central(device, address, timeout=5)
    gone = asyncio.get_running_loop().create_future()
    connection.on("disconnection", lambda reason: gone.done() or gone.set_result(reason))

    async def read() -> bytes:
        peer = Peer(connection)
        services = await peer.discover_service(HERALD_SERVICE)
        if not services:
            raise LookupError("no Herald service")
        characteristics = await services[0].discover_characteristics([PAYLOAD])
        if not characteristics:
            raise LookupError("no payload characteristic")
        return bytes(await characteristics[0].read_value())

    reading = asyncio.ensure_future(read())
    try:
        await asyncio.wait({reading, gone}, timeout=10, return_when=asyncio.FIRST_COMPLETED)
        if reading.done():
            try:
                return reading.result()
            except asyncio.CancelledError:  # Bumble cancels a pending request when the link goes
                raise ConnectionError("request cancelled (link gone)") from None
        raise ConnectionError(f"disconnected (0x{gone.result():02X})" if gone.done() else "no payload within 10 s")
    finally:
        if not reading.done():
            reading.cancel()
        if not gone.done():
            try:
                await asyncio.wait_for(connection.disconnect(), 3)
            except Exception:  # gone meanwhile, or the controller is slow to confirm
                pass


async def connect_as_central(device: Device, address, timeout: float):
    """`device.connect(address)` that returns the phone's own link and no other.

    Bumble 0.0.236's `Device.connect_le` resolves with the first connection of any role: its listener
    checks neither the role nor the peer (its `connect_classic` checks both). The phone advertises while
    it reads, so a central that connects to it during an attempt is returned as the phone's link to
    `address`; Bumble then clears its attempt's own address type, and when the phone's real link comes
    up it asserts (`own_address_type is not None`) and never tracks that link. The peer sees a central
    that sends nothing, and ours refuses such a central for 60 s. Seen in CI (docs/ci-flakes.md, the
    chip scenario): the phone filed the hosted wearable's payload under the single-chip wearable's
    address and never read the chip. Here an incoming link is left to its central, and the phone waits
    for its own, cancelling the attempt at the timeout as `connect_le` does."""
    mine = asyncio.get_running_loop().create_future()

    def on_connection(connection):
        if connection.role == Role.CENTRAL and not mine.done():
            mine.set_result(connection)

    def on_failure(error):
        if not mine.done():
            mine.set_exception(error)

    device.on(Device.EVENT_CONNECTION, on_connection)
    device.on(Device.EVENT_CONNECTION_FAILURE, on_failure)
    try:
        first = await device.connect(address, timeout=timeout)
        if first.role == Role.CENTRAL:
            return first
        say("incoming", str(first.peer_address), "during", str(address))
        # No await since `connect_le`'s `finally` cleared it, so no event came in between: the
        # attempt is still the controller's, made with the default own address type.
        device.connect_own_address_type = OwnAddressType.RANDOM
        try:
            return await asyncio.wait_for(asyncio.shield(mine), timeout)
        except asyncio.TimeoutError:
            await device.send_command(HCI_LE_Create_Connection_Cancel_Command())
            return await asyncio.wait_for(mine, 5)  # the cancelled attempt ends as a failure (0x02)
    finally:
        device.remove_listener(Device.EVENT_CONNECTION, on_connection)
        device.remove_listener(Device.EVENT_CONNECTION_FAILURE, on_failure)
        device.connect_own_address_type = None


if __name__ == "__main__":
    options = sys.argv[5:]
    if (len(sys.argv) < 5 or sys.argv[3] not in ("android", "iphone", "plain")
            or not set(options) <= {"--read", "--advertise-while-connected"} or len(set(options)) != len(options)):
        sys.exit(__doc__)
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], bytes.fromhex(sys.argv[4]), "--read" in options,
                     "--advertise-while-connected" in options))
