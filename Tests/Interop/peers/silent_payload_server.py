"""A Bumble Herald peripheral that lets discovery through but never answers a read of its payload, by
handle (Read, Read Blob) or by UUID (Read By Type of the payload characteristic): the client's ATT
transaction must time out (30 s, Core 5.4 Vol 3 Part F 3.3.3). Prints connected/disconnected lines.

usage: python silent_payload_server.py TRANSPORT ADDRESS [restart]

With `restart` it advertises again after each link, so a central's back-off shows.
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


async def main(transport: str, address: str, restart: bool) -> None:
    async with await open_transport(transport) as (source, sink):
        device = Device.with_hci("silent", Address(address), source, sink)
        device.add_service(Service(HERALD_SERVICE, [
            Characteristic(PAYLOAD_CHARACTERISTIC, Characteristic.Properties.READ, Attribute.READABLE, b"\x10" * 21),
        ]))
        # Swallow reads: the server's dispatcher looks these handlers up by name.
        device.gatt_server.on_att_read_request = lambda connection, request: print("read ignored", time.time(), flush=True)
        device.gatt_server.on_att_read_blob_request = lambda connection, request: None
        discover = device.gatt_server.on_att_read_by_type_request

        def read_by_type(connection, request):
            # Characteristic discovery (type 0x2803) goes through; the payload read by UUID does not.
            if request.attribute_type == PAYLOAD_CHARACTERISTIC:
                print("read ignored", time.time(), flush=True)
                return None
            return discover(connection, request)

        device.gatt_server.on_att_read_by_type_request = read_by_type
        device.on("connection", lambda c: (print("connected", time.time(), flush=True),
                                           c.on("disconnection", lambda reason: print("disconnected", time.time(), reason, flush=True))))
        await device.power_on()
        device.advertising_data = bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS, HERALD_SERVICE.to_bytes(force_128=True)),
        ]))
        await device.start_advertising(auto_restart=restart)
        print("advertising", flush=True)
        await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:] == ["restart"]))
