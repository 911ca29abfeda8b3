"""A Bumble Herald peripheral that lets discovery through and answers every read of its payload with
garbage: a Write Response (0x13) where a Read Response (or, to a read by UUID, a Read By Type
Response) belongs, then (to a Read Blob) a truncated Error Response. Prints connected/disconnected
lines and "read garbled".

usage: python garbage_payload_server.py TRANSPORT ADDRESS
"""
import asyncio
import sys
import time

from bumble.att import Attribute
from bumble.core import UUID, AdvertisingData
from bumble.device import Device
from bumble.gatt import Characteristic, Service
from bumble.hci import Address
from bumble.transport import open_transport

HERALD_SERVICE = UUID("428132af-4746-42d3-801e-4572d65bfd9b")
PAYLOAD_CHARACTERISTIC = UUID("3e98c0f8-8f05-4829-a121-43e38f8933e7")
start = time.monotonic()


def say(*words) -> None:
    print(*words, f"{time.monotonic() - start:.3f}", flush=True)


async def main(transport: str, address: str) -> None:
    async with await open_transport(transport) as (source, sink):
        device = Device.with_hci("garbage", Address(address), source, sink)
        device.add_service(Service(HERALD_SERVICE, [
            Characteristic(PAYLOAD_CHARACTERISTIC, Characteristic.Properties.READ, Attribute.READABLE, b"\x10" * 21),
        ]))

        def garble(pdu: bytes):
            def handler(connection, request):
                say("read", "garbled")
                connection.send_l2cap_pdu(4, pdu)
            return handler

        # The server's dispatcher looks these handlers up by name.
        device.gatt_server.on_att_read_request = garble(bytes([0x13]))
        device.gatt_server.on_att_read_blob_request = garble(bytes([0x01, 0x0C]))
        discover, garbled = device.gatt_server.on_att_read_by_type_request, garble(bytes([0x13]))
        # Characteristic discovery (type 0x2803) goes through; the payload read by UUID is garbled.
        device.gatt_server.on_att_read_by_type_request = (
            lambda connection, request: garbled(connection, request) if request.attribute_type == PAYLOAD_CHARACTERISTIC
            else discover(connection, request))
        device.on("connection", lambda c: (say("connected", str(c.peer_address)),
                                           c.on("disconnection", lambda reason: say("disconnected", reason))))
        await device.power_on()
        device.advertising_data = bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS, HERALD_SERVICE.to_bytes(force_128=True)),
        ]))
        await device.start_advertising(auto_restart=True)
        say("advertising")
        await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    asyncio.run(main(sys.argv[1], sys.argv[2]))
