"""A Bumble host that advertises the Herald service and serves a Herald payload characteristic.

usage: python payload_server.py TRANSPORT ADDRESS PAYLOAD_HEX [NAME]
"""
import asyncio
import sys

from bumble.att import Attribute
from bumble.core import UUID, AdvertisingData
from bumble.device import Device
from bumble.gatt import Characteristic, Service
from bumble.hci import Address
from bumble.transport import open_transport

HERALD_SERVICE = UUID("428132af-4746-42d3-801e-4572d65bfd9b")
PAYLOAD_CHARACTERISTIC = UUID("3e98c0f8-8f05-4829-a121-43e38f8933e7")


async def main(transport: str, address: str, payload: bytes, name: str) -> None:
    async with await open_transport(transport) as (source, sink):
        device = Device.with_hci(name, Address(address), source, sink)
        device.add_service(Service(HERALD_SERVICE, [
            Characteristic(PAYLOAD_CHARACTERISTIC, Characteristic.Properties.READ, Attribute.READABLE, payload),
        ]))
        await device.power_on()
        device.advertising_data = bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS, HERALD_SERVICE.to_bytes(force_128=True)),
        ]))
        device.scan_response_data = bytes(AdvertisingData([(AdvertisingData.COMPLETE_LOCAL_NAME, name.encode())]))
        await device.start_advertising(auto_restart=True)
        print("advertising", flush=True)
        await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    t, a, p = sys.argv[1:4]
    n = sys.argv[4] if len(sys.argv) > 4 else "herald-payload"
    asyncio.run(main(t, a, bytes.fromhex(p), n))
