"""A Bumble host that behaves like a phone running a Herald app, for the wearable interop tests.

usage: python herald_phone.py TRANSPORT ADDRESS KIND PAYLOAD_HEX

KIND:
  android  advertises the Herald service UUID and a pseudo device address (manufacturer data 0xFFFA,
           6 octets); serves the payload characteristic and the write-only signal characteristic.
  iphone   advertises only Apple manufacturer data (company 0x004C), as a backgrounded iOS app does;
           the Herald service (payload + write-and-notify signal characteristic) is found only by
           GATT discovery.
  plain    advertises a name; serves no Herald service (the wearable must back off from it).

Prints "advertising" when ready, then one line per event: "connected <peer> <t>",
"disconnected <peer> <t>", "read payload <t>", "signal <hex> <t>" (t: seconds since ready).
"""
import asyncio
import sys
import time

from bumble.att import Attribute
from bumble.core import UUID, AdvertisingData
from bumble.device import Device
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble.hci import Address
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


async def main(transport: str, address: str, kind: str, payload: bytes) -> None:
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
        await device.start_advertising(auto_restart=True, advertising_interval_min=interval, advertising_interval_max=interval)
        say("advertising")
        await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[3] not in ("android", "iphone", "plain"):
        sys.exit(__doc__)
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], bytes.fromhex(sys.argv[4])))
