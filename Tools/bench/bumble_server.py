"""The reference server for Tools/bench-vs-bumble: a Bumble host serving the same test profile as
`herald serve --profile test` (a 200-octet readable value; a notifying characteristic that sends
`count` 32-bit little-endian counter values once subscribed).

usage: python bumble_server.py TRANSPORT OWN_ADDRESS COUNT        prints "ready ADDRESS"
"""
import asyncio
import struct
import sys

from bumble.core import AdvertisingData, UUID
from bumble.device import Device
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble.hci import Address
from bumble.transport import open_transport

SERVICE = UUID("4c4d0001-7e57-4e3a-9d8c-5a1f3c2b1a00")
LONG = UUID("4c4d0002-7e57-4e3a-9d8c-5a1f3c2b1a00")
NOTIFYING = UUID("4c4d0004-7e57-4e3a-9d8c-5a1f3c2b1a00")


async def main(transport: str, own: str, count: int) -> None:
    async with await open_transport(transport) as (source, sink):
        device = Device.with_hci("bumble-bench", Address(own), source, sink)
        long_value = bytes(i & 0xFF for i in range(200))
        long_char = Characteristic(LONG, Characteristic.Properties.READ, Characteristic.READABLE, long_value)
        notifying = Characteristic(NOTIFYING, Characteristic.Properties.READ | Characteristic.Properties.NOTIFY,
                                   Characteristic.READABLE, bytes(4))
        device.add_service(Service(SERVICE, [long_char, notifying]))

        async def send_all(connection):
            for n in range(count):
                await device.notify_subscriber(connection, notifying, struct.pack("<I", n))

        def on_subscription(connection, notify_enabled, indicate_enabled):
            if notify_enabled:
                asyncio.get_running_loop().create_task(send_all(connection))

        notifying.on("subscription", on_subscription)
        device.advertising_data = bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LOCAL_NAME, b"bumble-bench"),
        ]))
        await device.power_on()
        await device.start_advertising(auto_restart=True)
        print(f"ready {own}", flush=True)
        await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
