"""A Bumble Herald venue beacon for `herald check`, conformant or broken in exactly one way.

usage: python check_peer.py TRANSPORT ADDRESS FAULT

FAULT `none` is conformant: the 128-bit Herald service UUID in a connectable advert
Herald service with the Android signal characteristic (write) and the payload characteristic (read)
serving a big-endian venue beacon payload whose premises name makes it 35 octets (Read Blob past
ATT_MTU 23), advertising again after each link. (A non-connectable peer cannot be made here: Bumble's
virtual controller reports every advert as ADV_IND; `HeraldCheckTests` covers ADV-2.) Every other FAULT breaks the one rule named beside it
in FAULTS, so the test can check that `herald check` fails that rule and no other.
"""
import asyncio
import sys

from bumble import att
from bumble.core import UUID, AdvertisingData
from bumble.device import Device, AdvertisingType
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble.hci import Address
from bumble.transport import open_transport

HERALD_SERVICE = UUID("428132af-4746-42d3-801e-4572d65bfd9b")
PAYLOAD = UUID("3e98c0f8-8f05-4829-a121-43e38f8933e7")
SIGNAL = UUID("f617b813-092e-437a-8324-e09a80821a11")
NAME = "Check Peer Diner".encode()
# Venue beacon 0x30, country 826, state 4, location 123456 (big-endian), premises name.
VENUE = bytes([0x30, 0x03, 0x3A, 0x00, 0x04, 0x00, 0x01, 0xE2, 0x40, 0x10, len(NAME)]) + NAME

FAULTS = {
    "none": None,
    "no-herald-id": "ADV-1",        # advertises flags and a name only
    "slow-adverts": "ADV-3",        # every 2.8 s
    "pausing-adverts": "ADV-4",     # 1 s on, 4 s off
    "no-service": "GATT-1",         # the payload served under another service
    "payload-not-readable": "GATT-2",
    "no-signal": "GATT-3",
    "blob-refused": "GATT-4",       # Read works, Read Blob is refused
    "unknown-type": "PAY-1",        # 0x50
    "short-payload": "PAY-2",       # a 15-octet Simple payload
    "bad-country": "PAY-3",         # country 0xFFFF: no ISO 3166-1 code in either order
    "bad-extended": "PAY-4",        # a section longer than what follows it
    "changing-payload": "PAY-5",    # a venue payload that changes at every read
    "rejects-fragments": "SIG-3",   # refuses 20-octet writes (the first fragment of a long message)
    "no-readvertise": "LINK-1",     # stays silent after its first link
}


def payload_for(fault: str) -> bytes:
    if fault == "unknown-type":
        return bytes([0x50]) + VENUE[1:]
    if fault == "short-payload":
        return bytes([0x10, 0x03, 0x3A, 0x00, 0x04]) + bytes(10)
    if fault == "bad-country":
        return bytes([0x30, 0xFF, 0xFF]) + VENUE[3:]
    if fault == "bad-extended":
        return VENUE[:10] + bytes([len(NAME) + 5]) + NAME
    return VENUE


async def main(transport: str, address: str, fault: str) -> None:
    assert fault in FAULTS, f"unknown fault {fault}"
    async with await open_transport(transport) as (source, sink):
        device = Device.with_hci("check-peer", Address(address), source, sink)
        reads = 0

        def read_payload(connection):
            nonlocal reads
            reads += 1
            if fault == "changing-payload":
                return VENUE[:-1] + bytes([0x30 + reads % 10])
            return payload_for(fault)

        def write_signal(connection, value):
            if fault == "rejects-fragments" and len(value) == 20:
                raise att.ATT_Error(att.ATT_INVALID_ATTRIBUTE_LENGTH_ERROR)

        payload = Characteristic(PAYLOAD, Characteristic.Properties.WRITE if fault == "payload-not-readable" else Characteristic.Properties.READ,
                                 Characteristic.Permissions.READABLE | Characteristic.Permissions.WRITEABLE, CharacteristicValue(read=read_payload))
        signal = Characteristic(SIGNAL, Characteristic.Properties.WRITE, Characteristic.Permissions.WRITEABLE,
                                CharacteristicValue(write=write_signal))
        characteristics = [payload] if fault == "no-signal" else [signal, payload]
        device.add_service(Service(UUID("0000fff0-0000-1000-8000-00805f9b34fb") if fault == "no-service" else HERALD_SERVICE,
                                   characteristics))
        if fault == "blob-refused":
            def refuse(bearer, request):
                raise att.ATT_Error(att.ATT_READ_NOT_PERMITTED_ERROR, request.attribute_handle)
            device.gatt_server.on_att_read_blob_request = refuse
        await device.power_on()
        fields = [(AdvertisingData.FLAGS, bytes([0x06]))]
        if fault != "no-herald-id":
            fields.append((AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS, HERALD_SERVICE.to_bytes(force_128=True)))
        advert = bytes(AdvertisingData(fields))
        response = bytes(AdvertisingData([(AdvertisingData.COMPLETE_LOCAL_NAME, b"check-" + fault.encode()[:20])]))
        interval = {"slow-adverts": 2800, "pausing-adverts": 200}.get(fault, 500)
        kind = AdvertisingType.UNDIRECTED_CONNECTABLE_SCANNABLE

        async def advertise():
            await device.start_advertising(advertising_type=kind, auto_restart=fault != "no-readvertise",
                                           advertising_data=advert, scan_response_data=response,
                                           advertising_interval_min=interval, advertising_interval_max=interval)

        await advertise()
        print("advertising", flush=True)
        while True:
            if fault == "pausing-adverts":
                await asyncio.sleep(1.0)
                if device.is_advertising:
                    await device.stop_advertising()
                    await asyncio.sleep(4.0)
                    if not device.connections:
                        await advertise()
            else:
                await asyncio.sleep(3600)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
