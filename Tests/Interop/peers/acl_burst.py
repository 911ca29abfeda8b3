"""Two Bumble devices on two controllers: a peripheral, and a central that connects to it and, in each
of ROUNDS rounds, waits QUIET seconds and then writes BURST ATT Write Commands at once (a host may
write as many ACL packets as it has credits for; Bumble queues the rest). Then it reads the GAP
device name over the same link, to show that the link and both controllers lived through it.

usage: python acl_burst.py PERIPHERAL_TRANSPORT CENTRAL_TRANSPORT [ROUNDS] [BURST] [QUIET]

Prints "burst N" per round, then "read NAME" and "ok"; a failure prints its exception and exits 1.
"""
import asyncio
import sys

from bumble.core import UUID
from bumble.device import Device, Peer
from bumble.hci import Address
from bumble.transport import open_transport

DEVICE_NAME = UUID.from_16_bits(0x2A00)


async def main(peripheral_transport: str, central_transport: str, rounds: int, burst: int, quiet: float) -> None:
    async with await open_transport(peripheral_transport) as (ps, pk), await open_transport(central_transport) as (cs, ck):
        peripheral = Device.with_hci("burst-peripheral", Address("C0:00:00:00:B0:01"), ps, pk)
        central = Device.with_hci("burst-central", Address("C0:00:00:00:B0:02"), cs, ck)
        await peripheral.power_on()
        await central.power_on()
        await peripheral.start_advertising(auto_restart=False)
        connection = await central.connect(Address("C0:00:00:00:B0:01"), timeout=20)
        # Write Command (Core 5.4 Vol 3 Part F 3.4.5.3) to a handle the peripheral does not have: a
        # command has no response, so the peripheral drops each one quietly.
        command = bytes([0x52, 0xF0, 0x0F]) + bytes(20)
        for n in range(rounds):
            # Quiet past the controller's 1 s TX-rate window, so the burst opens a new window.
            await asyncio.sleep(quiet)
            for _ in range(burst):
                connection.send_l2cap_pdu(4, command)
            print("burst", n + 1, flush=True)
        peer = Peer(connection)
        await asyncio.wait_for(peer.discover_services(), 20)
        names = await asyncio.wait_for(peer.read_characteristics_by_uuid(DEVICE_NAME), 10)
        print("read", bytes(names[0]).decode(errors="replace"), flush=True)
        await connection.disconnect()
        print("ok", flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    args = sys.argv[1:]
    asyncio.run(main(args[0], args[1], int(args[2]) if len(args) > 2 else 3, int(args[3]) if len(args) > 3 else 12,
                     float(args[4]) if len(args) > 4 else 1.5))
