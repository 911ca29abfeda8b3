"""A connectable Bumble peripheral serving a GATT database with 128-bit UUIDs and long values.

usage: python gatt_server.py TRANSPORT ADDRESS

Prints one JSON line describing the database exactly as Bumble laid it out (every service,
characteristic declaration, value and descriptor with handles, properties and static values), then
"advertising". A GATT client's dump can be compared with that description.
"""
import asyncio
import json
import sys

from bumble.core import AdvertisingData, UUID
from bumble.device import Device
from bumble.gatt import (
    GATT_CHARACTERISTIC_USER_DESCRIPTION_DESCRIPTOR,
    Characteristic,
    CharacteristicDeclaration,
    Descriptor,
    Service,
)
from bumble.hci import Address
from bumble.transport import open_transport

SERVICE = "9d2c0001-5b1a-4c6e-8f3d-2a7b6c5d4e01"


def uuid(n: int) -> str:
    return f"9d2c{n:04x}-5b1a-4c6e-8f3d-2a7b6c5d4e01"


P = Characteristic.Properties
LONG = bytes((i * 3) & 0xFF for i in range(300))
DESCRIPTION = "a notifying characteristic with a description longer than one ATT_MTU".encode()


def services() -> list[Service]:
    return [
        Service(SERVICE, [
            Characteristic(uuid(2), P.READ, Characteristic.READABLE, LONG),
            Characteristic(uuid(3), P.READ | P.WRITE, Characteristic.READABLE | Characteristic.WRITEABLE,
                           b"short value"),
            Characteristic(uuid(4), P.WRITE | P.WRITE_WITHOUT_RESPONSE, Characteristic.WRITEABLE, b""),
            Characteristic(uuid(5), P.READ | P.NOTIFY, Characteristic.READABLE, bytes([1, 2, 3, 4]),
                           descriptors=[Descriptor(GATT_CHARACTERISTIC_USER_DESCRIPTION_DESCRIPTOR,
                                                   Descriptor.READABLE, DESCRIPTION)]),
            # Readable only over an encrypted link: a client without pairing gets an error for it.
            Characteristic(uuid(6), P.READ, Characteristic.READ_REQUIRES_ENCRYPTION, b"secret"),
        ]),
        Service("180A", [
            Characteristic("2A29", P.READ, Characteristic.READABLE, b"Bumble interop"),
        ]),
    ]


def uuid_text(u) -> str:
    b = bytes(u.to_bytes())
    h = b[::-1].hex()
    return h if len(b) == 2 else f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def describe(device: Device) -> list[dict]:
    """The database as Bumble's server holds it, in handle order."""
    out = []
    current = None
    characteristic = None
    for a in device.gatt_server.attributes:
        if isinstance(a, Service):
            current = {"uuid": uuid_text(a.uuid), "start": a.handle, "end": a.end_group_handle, "characteristics": []}
            out.append(current)
        elif isinstance(a, CharacteristicDeclaration):
            c = a.characteristic
            value = c.value if isinstance(c.value, (bytes, bytearray)) else None
            characteristic = {"uuid": uuid_text(c.uuid), "declaration": a.handle, "handle": a.value_handle,
                              "properties": int(c.properties), "descriptors": [],
                              "value": value.hex() if value is not None else None,
                              "readable": bool(c.permissions & Characteristic.READABLE)}
            current["characteristics"].append(characteristic)
        elif isinstance(a, Characteristic):
            continue
        else:
            value = a.value if isinstance(a.value, (bytes, bytearray)) else None
            characteristic["descriptors"].append({"uuid": uuid_text(a.type), "handle": a.handle,
                                                  "value": value.hex() if value is not None else None})
    return out


async def main(transport: str, address: str) -> None:
    async with await open_transport(transport) as (source, sink):
        device = Device.with_hci("bumble-gatt", Address(address), source, sink)
        device.add_services(services())
        await device.power_on()
        print(json.dumps(describe(device)), flush=True)
        device.advertising_data = bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LOCAL_NAME, b"bumble-gatt"),
        ]))
        await device.start_advertising(auto_restart=True)
        print("advertising", flush=True)
        await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
