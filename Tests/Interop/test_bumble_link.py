"""Bumble's simulated radio (peers/controllers.py) keeps a link whose central changes its random
address, as the air does (issue 36 item 11, docs/ci-flakes.md).

A link is its access address, not its devices' addresses: a host may set a new random address
(LE Set Random Address, Core 5.4 Vol 4 Part E 7.8.4) while connected, and the link carries on. Our
wearable does so at each payload period (a new resolvable private address every 360 s). Bumble
0.0.236's LocalLink sends each ACL packet from the sender controller's *current* random address, and
the receiving controller looks the link up by it: after the change every PDU the central sends on an
existing link is dropped ("!!! no connection for ..."). That is how `test_iphone_gets_each_signal_message_in_one_write[bumble]`
failed about one run in ten.
"""
import asyncio

import pytest

from bumble.att import Attribute
from bumble.core import UUID
from bumble.device import Device, Peer
from bumble.gatt import Characteristic, Service
from bumble.hci import Address, HCI_LE_Set_Random_Address_Command
from bumble.transport import open_transport

from radio import BumbleRadio

SERVICE = UUID("428132af-4746-42d3-801e-4572d65bfd9b")
VALUE = UUID("3e98c0f8-8f05-4829-a121-43e38f8933e7")

pytestmark = pytest.mark.timeout(180)


async def read_across_an_address_change(paths):
    async with await open_transport(f"serial:{paths[0]}") as (ps, pk), \
               await open_transport(f"serial:{paths[1]}") as (cs, ck):
        peripheral = Device.with_hci("peripheral", Address("C1:00:00:00:00:01"), ps, pk)
        peripheral.add_service(Service(SERVICE, [Characteristic(VALUE, Characteristic.Properties.READ,
                                                                Attribute.READABLE, b"\x10\x03\x3a")]))
        await peripheral.power_on()
        await peripheral.start_advertising(auto_restart=False)
        central = Device.with_hci("central", Address("D1:00:00:00:00:01"), cs, ck)
        await central.power_on()
        connection = await asyncio.wait_for(central.connect(Address("C1:00:00:00:00:01")), 10)
        peer = Peer(connection)
        await asyncio.wait_for(peer.discover_services([SERVICE]), 10)
        characteristic = peer.get_services_by_uuid(SERVICE)[0]
        await asyncio.wait_for(characteristic.discover_characteristics(), 10)
        value = characteristic.get_characteristics_by_uuid(VALUE)[0]
        before = await asyncio.wait_for(value.read_value(), 10)
        # The central's host takes a new random address while the link is up (a wearable's rotation).
        await central.send_command(HCI_LE_Set_Random_Address_Command(random_address=Address("D2:00:00:00:00:02")))
        after = await asyncio.wait_for(value.read_value(), 10)
        return bytes(before), bytes(after)


def test_a_link_outlives_its_centrals_new_random_address():
    radio = BumbleRadio(2)
    try:
        before, after = asyncio.run(read_across_an_address_change(radio.paths))
    finally:
        radio.close()
    assert before == after == b"\x10\x03\x3a"
