"""N Bumble virtual controllers on one simulated LE radio, each behind its own HCI transport.

usage: python controllers.py TRANSPORT TRANSPORT [TRANSPORT ...]

Bumble 0.0.236's own `bumble.apps.controllers` refuses anything but exactly two transports; tests
with several centrals need more. Its LE Create Connection Cancel is made to do what the Core says, a
connection request no advertiser took fails as it does on air, a link outlives a new random address
of its central, and which of several centrals wins a contested advert varies (below).

Made to be started by hand too (README "Try it by hand"): a `pty:PATH` link a killed run left behind is
replaced, SIGTERM closes the links like Ctrl-C, and a command the virtual controller does not implement
is one quiet line per command (`--- not implemented by Bumble's controller: ...`), not a red warning
per use: it is the controller's answer (Unknown HCI Command), which the host handles.
"""
import asyncio
import logging
import os
import random
import re
import signal
import sys

from bumble import hci
from bumble.controller import Connection, Controller, LegacyAdvertiser
from bumble.core import PhysicalTransport
from bumble.link import LocalLink
from bumble.transport import open_transport


def cancel_connection_as_the_core_says(self, _command):
    """LE Create Connection Cancel (Core 5.4 Vol 4 Part E 7.8.13): with an attempt pending, the controller
    ends it and then reports LE Connection Complete with 0x02 Unknown Connection Identifier; with none,
    it refuses with 0x0C Command Disallowed.

    Bumble 0.0.236 answers success and does nothing else: its `pending_le_connection` stays set, so every
    later LE Create Connection is refused with 0x0C until the cancelled peer advertises again, which a
    peer that has changed its address never does. Captured with two wearables on a 20 s payload period:
    a re-read attempt to the peer's address of the period just ended timed out, was cancelled, and from
    then on both controllers refused every connection (interop test_rotation). Real controllers end the
    attempt (Zephyr's does, in the same test), so this one does too.
    """
    pending = self.pending_le_connection
    if pending is None:
        return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.COMMAND_DISALLOWED_ERROR)
    self.pending_le_connection = None

    def report():
        self.send_hci_packet(hci.HCI_LE_Connection_Complete_Event(
            status=hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR, connection_handle=0, role=0,
            peer_address_type=pending.peer_address.address_type, peer_address=pending.peer_address,
            connection_interval=0, peripheral_latency=0, supervision_timeout=0, central_clock_accuracy=0))

    # After the Command Complete this handler's return value becomes.
    asyncio.get_running_loop().call_soon(report)
    return hci.HCI_StatusReturnParameters(hci.HCI_ErrorCode.SUCCESS)


Controller.on_hci_le_create_connection_cancel_command = cancel_connection_as_the_core_says

_create_le_connection = Controller.create_le_connection


def create_le_connection_as_on_air(self, peer_address):
    """A central's link whose CONNECT_IND no advertiser took ends with Disconnection Complete 0x3E
    (Connection Failed to be Established), as on air when the peripheral never answers in the first
    six connection events (Core 5.4 Vol 6 Part B 4.5.2).

    Bumble 0.0.236 completes the central's side of every connection it asks for, whether or not the
    peripheral's controller accepts the CONNECT_IND; the peripheral's drops it when its advertising
    has stopped, e.g. because another central's CONNECT_IND for the same advert came first. The
    central's host is then left with a link nobody is on (bench-wearables on Bumble: two wearables
    connected to the phone on one advert, the phone's host saw one link, the other wearable's Exchange
    MTU went unanswered until its 5 s first-answer bound; Zephyr's controller ends such a link 0x3E).
    """
    _create_le_connection(self, peer_address)
    connection = self.le_connections.get(peer_address)
    if connection is None or connection.role != hci.Role.CENTRAL:
        return

    def check():
        # The CONNECT_IND reached every controller with call_soon; by now the peripheral took it or not.
        taken = any(c is not self and (p := c.le_connections.get(connection.self_address)) is not None
                    and p.role == hci.Role.PERIPHERAL for c in self.link.controllers)
        if not taken and self.le_connections.get(peer_address) is connection:
            self.on_le_disconnected(connection, hci.HCI_ErrorCode.CONNECTION_FAILED_TO_BE_ESTABLISHED_ERROR)

    # About six connection events at the intervals our centrals ask for.
    asyncio.get_running_loop().call_later(0.05, check)


Controller.create_le_connection = create_le_connection_as_on_air

_on_acl_pdu = Connection.on_acl_pdu


def send_acl_from_the_links_own_address(self, pdu: bytes) -> None:
    """Each LE ACL PDU leaves from the address the link was made with, whatever the controller's random
    address is now: on air a link is its access address, and a host may set a new random address while
    connected (LE Set Random Address, Core 5.4 Vol 4 Part E 7.8.4), as our wearable does at each payload
    period.

    Bumble 0.0.236's LocalLink.send_acl_data sends from the sender controller's *current* random address,
    and the receiver finds the link by it: after the central's address changed, every PDU it sent on a link
    it already had was dropped ("!!! no connection for <new address>"). CI failed
    test_iphone_gets_each_signal_message_in_one_write[bumble] about one run in ten that way (a run
    straddles one of the wearable's 360 s periods about one time in six); test_bumble_link.py shows it.
    """
    if not self.link or self.transport != PhysicalTransport.LE:
        return _on_acl_pdu(self, pdu)
    destination = self.link.find_le_controller(self.peer_address)
    if destination is not None:
        source, transport = self.self_address, self.transport
        asyncio.get_running_loop().call_soon(lambda: destination.on_link_acl_data(source, transport, pdu))


Connection.on_acl_pdu = send_acl_from_the_links_own_address


class UnsupportedCommandNote(logging.Filter):
    """Bumble's controller logs every command it does not implement as a red WARNING, each time it is
    sent (`--- Unsupported command HCI_LE_SET_DATA_LENGTH_COMMAND`), which reads like a failure. It is an
    answer, Unknown HCI Command (0x01), that hosts expect from controllers that lack a command: say
    it once per command, plainly."""

    def __init__(self):
        super().__init__()
        self.seen = set()

    def filter(self, record):
        text = record.getMessage()
        if "Unsupported command" not in text:
            return True
        plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
        name = plain.split("Unsupported command", 1)[1].split()[0].rstrip(":")
        if name in self.seen:
            return False
        self.seen.add(name)
        record.levelno, record.levelname = logging.INFO, "INFO"
        record.msg, record.args = f"--- not implemented by Bumble's controller, answered Unknown HCI Command: {name}", ()
        return True


def quiet_unsupported_commands():
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log = logging.getLogger("bumble.controller")
    log.addFilter(UnsupportedCommandNote())
    log.addHandler(handler)
    log.propagate = False
    log.setLevel(logging.INFO)


def holders_of(device):
    """Whether any process has `device` open (a pty a running controllers.py still serves)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.path.realpath(f"/proc/{pid}/fd/{fd}") == device:
                    return True
        except OSError:
            continue
    return False


def clear_stale_link(name):
    """A `pty:PATH` link left by a run that was killed (SIGKILL, or SIGTERM before this file handled it)
    made the next run fail with FileExistsError. Such a link points at a pty nobody has open, or at
    nothing: remove it. A link to a pty some process still holds is another run's: refuse, in one line."""
    if not name.startswith("pty:"):
        return
    path = name[4:]
    if not os.path.islink(path):
        if os.path.exists(path):
            raise SystemExit(f"controllers.py: {path} exists and is not a pty link; give another path")
        return
    target = os.path.realpath(path)
    if os.path.exists(target) and holders_of(target):
        raise SystemExit(f"controllers.py: {path} is in use ({target} is open; is another controllers.py running?)")
    os.unlink(path)


def advertise_at_the_interval_asked(self):
    """A legacy advertiser sends one advertising event every Advertising_Interval_Min × 0.625 ms (Core 5.4
    Vol 4 Part E 7.8.5), each up to 10 ms late (advDelay, Vol 6 Part B 4.4.2.2.1).

    Bumble 0.0.236 reads the interval as milliseconds: a beacon set to 500 ms (800 units) advertised
    every 800 ms, so `herald scan` and `herald check` measured 801 ms (1.6 times the interval asked), and
    a device at 625 ms or more looked slower than ADV-3's 1,000 ms. Its extended advertiser converts
    correctly.
    """
    self.send_advertising_data()
    delay = self.advertising_interval_min * 0.625 / 1000.0 + random.uniform(0, 0.010)
    self.timer_handle = asyncio.get_running_loop().call_later(delay, self._on_timer_fired)


LegacyAdvertiser._on_timer_fired = advertise_at_the_interval_asked


def send_advertising_pdu_in_no_fixed_order(self, sender_controller, packet):
    """Each advertising PDU reaches the other controllers in a new random order.

    Bumble 0.0.236's LocalLink hands an advertising PDU to every controller in the iteration order of a
    set, which is fixed for a run. Centrals waiting on one advertiser each answer its ADV_IND as they get
    it, so their CONNECT_INDs reach it in that order and it takes the first (Core 5.4 Vol 6 Part B
    4.4.2.3): the same central won every contested advert for the whole run. On air the winner varies
    from event to event (timing, capture effect). In CI's `test_hostile_centrals[bumble]` the churning
    central, pending again at once after each of its links, won every advert from the moment the churn
    began, and the polite reader and the flood never got a link in 36 s (docs/ci-flakes.md item 18);
    `test_bumble_link.py` shows the order now varies."""
    loop = asyncio.get_running_loop()
    receivers = [c for c in self.controllers if c != sender_controller]
    random.shuffle(receivers)
    for c in receivers:
        loop.call_soon(c.on_ll_advertising_pdu, packet)


LocalLink.send_advertising_pdu = send_advertising_pdu_in_no_fixed_order


async def main(names: list[str]) -> None:
    link = LocalLink()
    transports = []
    controllers = []
    # SIGTERM ends the run as Ctrl-C does, so the pty links are removed.
    loop = asyncio.get_running_loop()
    stopped = loop.create_future()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: stopped.done() or stopped.set_result(None))
    for index, name in enumerate(names):
        clear_stale_link(name)
        transport = await open_transport(name)
        transports.append(transport)
        controllers.append(Controller(f"C{index}", host_source=transport.source, host_sink=transport.sink, link=link))
    print("ready", flush=True)
    try:
        await stopped
    finally:
        for t in transports:
            await t.close()


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    quiet_unsupported_commands()
    asyncio.run(main(sys.argv[1:]))
