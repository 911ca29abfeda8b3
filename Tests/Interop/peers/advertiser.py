"""A Bumble host that advertises given manufacturer data until killed.

usage: python advertiser.py TRANSPORT ADDRESS COMPANY_ID HEXDATA [NAME]
"""
import asyncio
import sys

from bumble.core import AdvertisingData
from bumble.device import Device
from bumble.hci import Address
from bumble.transport import open_transport


async def main(transport: str, address: str, company: int, data: bytes, name: str) -> None:
    async with await open_transport(transport) as (source, sink):
        device = Device.with_hci(name, Address(address), source, sink)
        await device.power_on()
        device.advertising_data = bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.MANUFACTURER_SPECIFIC_DATA, company.to_bytes(2, "little") + data),
            (AdvertisingData.COMPLETE_LOCAL_NAME, name.encode()),
        ]))
        await device.start_advertising(auto_restart=True)
        print("advertising", flush=True)
        await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    t, a, c, d = sys.argv[1:5]
    n = sys.argv[5] if len(sys.argv) > 5 else "bumble-adv"
    asyncio.run(main(t, a, int(c, 0), bytes.fromhex(d), n))
