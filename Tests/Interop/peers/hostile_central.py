"""Bumble centrals that misuse a Herald wearable, several in one process (one controller each), and
a polite one that reads its payload over and over. Each finds the wearable by its advert: the Herald
service UUID from a resolvable private address (the Herald phones on the same radio advertise from
static addresses).

usage: python hostile_central.py MODE SECONDS [--connect-timeout S] [--spare HEX] [--mtu N] TRANSPORT [TRANSPORT ...]

MODE:
  silent  connect and say nothing at L2CAP; reconnect as soon as the link is dropped.
  flood   connect and send ATT requests back to back (4 every 50 ms, never waiting for a response:
          Core 5.4 Vol 3 Part F 3.3.2 allows one outstanding); reconnect when dropped.
  churn   connect and disconnect at once, in a loop.
  reader  connect, discover the Herald service, read the payload, disconnect; every 3 s.

--connect-timeout: give up a connection attempt after S seconds (cancelled) and find the wearable again
by its advert: a wearable that changed its resolvable private address meanwhile never answers the old
one. Without it an attempt waits until the run ends.

--mtu: the reader exchanges this ATT_MTU before each read, as a phone's Herald app does (after the
wearable's Data Length Update has ended: see `data_length_settled`).

--spare: leave alone an advertiser whose advert holds these octets (hex). The Herald reference's C++
wearable advertises the Herald service from a resolvable private address too, and lists the 16-bit
services 0x1801 and 0x1800 (`050301180018`), which ours does not: sparing it aims the siege at the
wearable under test (the reference crashes when a silent central's link to it times out, and stops the
whole simulated radio with it: docs/reference-cpp-captures.md).

Runs SECONDS, then ends its links and cancels a connection being made, and exits. One line per event
on stdout, "EVENT INDEX t [detail]" (t: seconds since start): connected (a link the wearable's
controller holds too), ghost (one it does not, ended at once), disconnected (with the HCI reason), read
(with the payload's hex), failed (why), crashed (a central that stopped early: a defect here).
"""
import asyncio
import os
import signal
import sys
import time
import traceback

from bumble.core import UUID
from bumble.device import Device, Peer
from bumble.hci import Address
from bumble.transport import open_transport

HERALD_SERVICE = UUID("428132af-4746-42d3-801e-4572d65bfd9b")
PAYLOAD = UUID("3e98c0f8-8f05-4829-a121-43e38f8933e7")
# Read By Group Type Request for primary services over every handle (Core 5.4 Vol 3 Part F 3.4.4.9).
DISCOVERY_REQUEST = bytes([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])

MODES = ("silent", "flood", "churn", "reader")
GHOST = 15.0
# How long the LL feature exchange may take before the link is taken for a ghost (see `connect`).
GHOST_CHECK = 5.0
# A polite central's GATT step: the wearable answers in well under a second; a link that does not is
# a ghost (above) and is dropped sooner.
STEP = 5.0
# ATT requests per 50 ms: well past one per connection event, and within what a simulated UART takes
# (a pty that fills blocks this whole process).
FLOOD_BURST = 4
# How long the reader waits for the wearable's Data Length Update before its MTU exchange (see
# `data_length_settled`): the wearable starts it as the link comes up, done within a few events.
DATA_LENGTH_WAIT = 2.0
start = time.monotonic()


def say(event: str, index: int, *detail) -> None:
    print(event, index, f"{time.monotonic() - start:.3f}", *detail, flush=True)


SPARED: list = []
# The reader's ATT_MTU (--mtu): exchanged before it reads; none by default.
MTU = 0


def is_wearable(adv) -> bool:
    if any(octets in adv.data_bytes for octets in SPARED):
        return False
    # A resolvable private address has 0b01 in its two most significant bits (Core 5.4 Vol 6 Part B 1.3.2.2).
    top = bytes(adv.address)[5] >> 6  # little-endian: the last octet is the most significant
    return (adv.is_connectable and adv.address.address_type == Address.RANDOM_DEVICE_ADDRESS and top == 0b01
            and bytes(HERALD_SERVICE.to_bytes()) in adv.data_bytes)


async def find(device: Device, until: float) -> Address:
    found = asyncio.get_running_loop().create_future()

    def on_advertisement(adv):
        if not found.done() and is_wearable(adv):
            found.set_result(adv.address)

    device.on("advertisement", on_advertisement)
    try:
        await device.start_scanning(active=False, filter_duplicates=False)
        return await asyncio.wait_for(found, min(20.0, max(0.1, until - time.monotonic())))
    finally:
        device.remove_listener("advertisement", on_advertisement)
        # Zephyr's controller refuses LE Create Connection while scanning.
        await device.stop_scanning()


async def connect(device: Device, index: int, until: float, connect_timeout):
    """A link to the wearable that its controller holds too, or None when the run ended first (a
    connection still being made is cancelled: a controller left initiating would connect to the
    wearable after this process has gone, and hold a link no host ends)."""
    address = await find(device, until)
    # The bound matters: W changes its address every payload period, and an attempt on the old one
    # would wait out the run. Bumble's connect cancels it at the bound and raises TimeoutError
    # (the controller ends it with 0x02: Zephyr's, and Bumble's as peers/controllers.py makes it);
    # `attempt` tries again from the advert.
    pending = asyncio.ensure_future(device.connect(address, timeout=connect_timeout))
    done, _ = await asyncio.wait([pending], timeout=max(0.0, until - time.monotonic()))
    if not done:
        try:
            await asyncio.wait_for(device.cancel_connection(), 5)
            connection = await asyncio.wait_for(pending, 5)  # the cancel's outcome, or a link that won the race
        except BaseException as e:
            say("failed", index, "cancelled", type(e).__name__)
            return None
        await abandon(connection, index)
        return None
    connection = pending.result()
    gone = asyncio.get_running_loop().create_future()

    def on_disconnection(reason):
        say("disconnected", index, reason)
        if not gone.done():
            gone.set_result(reason)

    connection.on("disconnection", on_disconnection)
    # Only a link the wearable's controller holds too counts: on Zephyr's radio a central whose
    # CONNECT_IND the advertiser missed (it took another central's) has its link fail with 0x3E
    # after six connection events (Core 5.4 Vol 6 Part B 4.5.2); on Bumble's two centrals answering
    # one advert both think they connected, and only one did (a ghost, which nothing ever ends).
    # The LL feature exchange (LE Read Remote Features, Vol 4 Part E 7.8.21) is answered by the
    # wearable's link layer alone: its host hears nothing, so a silent central stays silent.
    features = asyncio.ensure_future(device.get_remote_le_features(connection))
    await asyncio.wait([features, gone], timeout=GHOST_CHECK, return_when=asyncio.FIRST_COMPLETED)
    if gone.done() or not features.done() or features.cancelled() or features.exception() is not None:
        if not features.done():
            features.cancel()
        say("ghost", index, str(address))
        if not gone.done():
            await abandon(connection, index)
        return None
    say("connected", index, str(address))
    return connection, gone


async def data_length_settled(connection) -> None:
    """Waits (at most DATA_LENGTH_WAIT) for the Data Length Update the wearable starts on each new link
    to end, before an ATT_MTU exchange lets the wearable answer in PDUs over 27 octets.

    Why (docs/ci-flakes.md, "The reader's controller ends the simulation"): Zephyr's link layer, as the
    responder of LL_LENGTH_REQ, sizes its radio's receive buffer (MAXLEN) from the new length only from
    the next connection event, while the initiator may send the longer PDUs right after the
    LL_LENGTH_RSP. When this central's forced MD (CONFIG_BT_CTLR_FORCE_MD_AUTO) keeps that event open,
    a 48-octet response arrives in it: a real nRF52 cuts it at MAXLEN, fails its CRC and has it sent
    again in the next event; the simulated nRF52 radio (nRF HW models of 2021-22: "Maxlength is only
    partially checked, the packet is cut, but the interaction with the phy is not proper") raises END
    early while the phy still receives, and the next transmission ends the whole simulation ("Tried to
    request a new tx while some other transaction was ongoing"). After the LE Data Length Change
    event both link layers use the new length."""
    if connection.data_length.max_rx_octets > 27:
        return
    changed = asyncio.get_running_loop().create_future()

    def on_change():
        if not changed.done():
            changed.set_result(None)

    connection.on("connection_data_length_change", on_change)
    try:
        await asyncio.wait_for(changed, DATA_LENGTH_WAIT)
    except asyncio.TimeoutError:
        pass  # a wearable that starts no Data Length Update (Bumble's radio): nothing to wait for
    finally:
        connection.remove_listener("connection_data_length_change", on_change)


async def abandon(connection, index: int) -> None:
    """Ends a link from our side, whatever state it is in (a ghost's Disconnect is answered locally)."""
    try:
        await asyncio.wait_for(connection.disconnect(), 5)
    except Exception as e:
        say("failed", index, "disconnect", type(e).__name__)


async def run(mode: str, index: int, transport: str, until: float, connect_timeout) -> None:
    try:
        async with await open_transport(transport) as (source, sink):
            own = Address(f"D{index:X}:00:00:00:0A:{MODES.index(mode):02X}")
            device = Device.with_hci(f"hostile-{index}", own, source, sink)
            await device.power_on()
            while time.monotonic() < until:
                await attempt(mode, device, index, until, connect_timeout)
    except BaseException as e:
        # Nothing should end a central before its time: say so, in its lines and with the traceback.
        say("crashed", index, type(e).__name__)
        traceback.print_exc()
        raise


async def attempt(mode: str, device: Device, index: int, until: float, connect_timeout) -> None:
    """One link, used as MODE says and ended (by us, or by the wearable)."""
    try:
        link = await connect(device, index, until, connect_timeout)
        if link is None:
            return
        connection, gone = link
        if mode == "silent":
            # A link that outlives any idle bound the wearable could have is a ghost `connect` missed.
            try:
                await asyncio.wait_for(asyncio.shield(gone), min(GHOST, max(0.1, until - time.monotonic())))
            except asyncio.TimeoutError:
                await abandon(connection, index)
        elif mode == "churn":
            await connection.disconnect()
            await asyncio.wait_for(gone, 10)
        elif mode == "flood":
            while not gone.done() and time.monotonic() < until:
                for _ in range(FLOOD_BURST):
                    connection.send_l2cap_pdu(4, DISCOVERY_REQUEST)
                await asyncio.sleep(0.05)
            if not gone.done():
                await abandon(connection, index)
        else:
            try:
                peer = Peer(connection)
                if MTU:
                    await data_length_settled(connection)
                    # As a phone's Herald app does before it reads (Exchange MTU, Core 5.4 Vol 3 Part F 3.4.2).
                    await asyncio.wait_for(peer.request_mtu(MTU), STEP)
                await asyncio.wait_for(peer.discover_services([HERALD_SERVICE]), STEP)
                service = peer.get_services_by_uuid(HERALD_SERVICE)[0]
                await asyncio.wait_for(service.discover_characteristics(), STEP)
                value = await asyncio.wait_for(service.get_characteristics_by_uuid(PAYLOAD)[0].read_value(), STEP)
                say("read", index, bytes(value).hex())
            finally:
                if not gone.done():
                    await abandon(connection, index)
            await asyncio.sleep(3)
    except asyncio.TimeoutError:
        say("failed", index, "timeout")
    except (Exception, asyncio.CancelledError) as e:
        # A refused or lost link: try again, as a hostile peer would. Bumble's GATT client cancels
        # the request in flight when its link goes (CancelledError, which `Exception` does not
        # catch); nothing here cancels the central's own task.
        say("failed", index, type(e).__name__)
        await asyncio.sleep(0.2)


async def main(mode: str, seconds: float, transports: list, connect_timeout) -> None:
    until = time.monotonic() + seconds
    signal.alarm(int(seconds) + 40)  # a process stuck on a full pty ends all the same
    # Each central ends its link or its pending connection by itself when the time is up (`connect`).
    await asyncio.wait([asyncio.create_task(run(mode, i, t, until, connect_timeout)) for i, t in enumerate(transports)], timeout=seconds + 30)
    say("done", 0)
    os._exit(0)


if __name__ == "__main__":
    args = sys.argv[1:]
    bound = None
    while len(args) > 3 and args[2] in ("--connect-timeout", "--spare", "--mtu"):
        if args[2] == "--connect-timeout":
            bound = float(args[3])
        elif args[2] == "--mtu":
            MTU = int(args[3])
        else:
            SPARED.append(bytes.fromhex(args[3]))
        del args[2:4]
    if len(args) < 3 or args[0] not in MODES:
        sys.exit(__doc__)
    asyncio.run(main(args[0], float(args[1]), args[2:], bound))
