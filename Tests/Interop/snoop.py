"""Reads the btsnoop captures `--btsnoop` writes (v1, datalink 1002: whole H4 packets), for tests that
check what crossed HCI: every command the controller refused, the data length a link reached."""
import struct
from dataclasses import dataclass

# Opcodes by name for readable failures (Core 5.4 Vol 4 Part E 7).
NAMES = {
    0x0406: "Disconnect", 0x0C03: "Reset", 0x2005: "LE Set Random Address",
    0x2006: "LE Set Advertising Parameters", 0x2008: "LE Set Advertising Data",
    0x2009: "LE Set Scan Response Data", 0x200A: "LE Set Advertising Enable",
    0x200B: "LE Set Scan Parameters", 0x200C: "LE Set Scan Enable", 0x200D: "LE Create Connection",
    0x200E: "LE Create Connection Cancel", 0x2013: "LE Connection Update", 0x2017: "LE Encrypt",
    0x2018: "LE Rand", 0x2020: "LE Remote Connection Parameter Request Reply",
    0x2021: "LE Remote Connection Parameter Request Negative Reply", 0x2022: "LE Set Data Length",
}


@dataclass
class Refusal:
    opcode: int
    status: int

    def __str__(self):
        return f"{NAMES.get(self.opcode, hex(self.opcode))} -> status 0x{self.status:02X}"


def packets(path):
    """(received, h4 bytes) for every record."""
    for received, _t, p in records(path):
        yield received, p


# btsnoop timestamps count microseconds from midnight, 1 January of year 0 (the format's epoch).
UNIX_EPOCH = 62168256000


def unix_seconds(t):
    """A capture time (seconds, as `records` gives them) as seconds since 1970, to compare with time.time()."""
    return t - UNIX_EPOCH


def records(path):
    """(received, seconds, h4 bytes) for every record; seconds from the capture's own clock."""
    data = open(path, "rb").read()
    if data[:8] != b"btsnoop\0":
        raise ValueError(f"{path}: not a btsnoop file")
    version, datalink = struct.unpack(">II", data[8:16])
    if datalink != 1002:
        raise ValueError(f"{path}: datalink {datalink}, expected 1002 (H4)")
    offset = 16
    while offset + 24 <= len(data):
        _orig, incl, flags, _drops, ts = struct.unpack(">IIIIq", data[offset:offset + 24])
        offset += 24
        yield bool(flags & 1), ts / 1e6, data[offset:offset + incl]
        offset += incl


def advertising_reports(path):
    """(seconds, advertiser address in HCI order, is_adv_ind) for every LE Advertising Report (Core 5.4
    Vol 4 Part E 7.7.65.2) and LE Extended Advertising Report (7.7.65.13) a capture received, first
    report of each event only (Zephyr's and Bumble's controllers send one report per event).
    `is_adv_ind`: a connectable undirected advert, not a scan response (legacy event type 0x00;
    extended: bit 0 set and bit 3 clear, as Bumble's controller reports an ADV_IND with 0x0001 where
    the Core has 0x0013)."""
    for received, t, p in records(path):
        if not (received and len(p) >= 14 and p[0] == 0x04 and p[1] == 0x3E):
            continue
        if p[3] == 0x02:
            yield t, bytes(p[7:13]), p[5] == 0x00
        elif p[3] == 0x0D and len(p) >= 16:
            yield t, bytes(p[8:14]), p[5] & 0x09 == 0x01


def refusals(path):
    """Every Command Complete or Command Status with a non-zero status, in order."""
    out = []
    for received, p in packets(path):
        if not received or len(p) < 3 or p[0] != 0x04:
            continue
        code, params = p[1], p[3:]
        if code == 0x0E and len(params) >= 4:      # Command Complete: ncmd, opcode, status
            opcode, status = params[1] | params[2] << 8, params[3]
        elif code == 0x0F and len(params) >= 4:    # Command Status: status, ncmd, opcode
            status, opcode = params[0], params[2] | params[3] << 8
        else:
            continue
        if opcode != 0 and status != 0:
            out.append(Refusal(opcode, status))
    return out


def refused(path, kind):
    """`refusals` as text, less the one known answer of Bumble's controller (`kind` "bumble"): it lists
    LE Set Data Length among its supported commands but answers it Unknown Command, and the stack asks
    once and then no more; and less each LE Create Connection that the peer's own connection crossed
    (`create_connection_refusals_crossed_by_the_peer`)."""
    out = [str(r) for r in refusals(path)]
    if kind == "bumble" and "LE Set Data Length -> status 0x01" in out:
        out.remove("LE Set Data Length -> status 0x01")
    for _ in range(create_connection_refusals_crossed_by_the_peer(path)):
        out.remove("LE Create Connection -> status 0x0B")
    return out


def advertising_enable_refusals_after_a_connection(path):
    """How many LE Set Advertising Enable refusals (0x0C) followed an LE (Enhanced) Connection Complete
    in the peripheral role (7.7.65.1, 7.7.65.10) received since the last accepted LE Set Advertising
    Enable: the controller had stopped advertising by itself when the central connected (Core 5.4 Vol 6
    Part B 4.4.2.3), after the host queued the command, so Zephyr 2.5 refused a Disable that found
    advertising already off (3.0 accepts it). A host cannot avoid that race; it must only not lose
    track (HeraldAdvertiser's AdvertisingEnableQueue)."""
    explained, connected = 0, False
    for received, p in packets(path):
        if not received or len(p) < 4 or p[0] != 0x04:
            continue
        if p[1] == 0x3E and p[3] in (0x01, 0x0A) and len(p) >= 8 and p[4] == 0 and p[7] == 1:
            connected = True
        elif p[1] == 0x0E and len(p) >= 7 and (p[4] | p[5] << 8) == 0x200A:
            if p[6] == 0:
                connected = False
            elif p[6] == 0x0C and connected:
                explained += 1
    return explained


def create_connection_refusals_crossed_by_the_peer(path):
    """How many LE Create Connection refusals 0x0B (Connection Already Exists) had an LE (Enhanced)
    Connection Complete from the very peer address, in the peripheral role (7.7.65.1, 7.7.65.10),
    arrive after the command went out and before its Command Status: the peer connected to us as we
    asked to connect to it, the event and the command crossing on the line, and Zephyr's controller
    refuses a second link to a connected peer. A host cannot avoid that race; the stack ends its
    attempt on that Connection Complete (LEStack+Links) and works over the peer's link."""
    explained, pending, crossed = 0, None, False
    for received, p in packets(path):
        if not received and len(p) >= 16 and p[0] == 0x01 and (p[1] | p[2] << 8) == 0x200D:
            pending, crossed = bytes(p[10:16]), False   # 7.8.12: Peer_Address after 5 octets
        elif received and len(p) >= 7 and p[0] == 0x04:
            if (p[1] == 0x3E and p[3] in (0x01, 0x0A) and len(p) >= 15 and p[4] == 0 and p[7] == 1
                    and pending is not None and bytes(p[9:15]) == pending):
                crossed = True
            elif p[1] == 0x0F and (p[5] | p[6] << 8) == 0x200D:
                if p[3] == 0x0B and crossed:
                    explained += 1
                pending = None
    return explained


def data_length_changes(path):
    """(handle, max tx octets, max rx octets) of every LE Data Length Change (7.7.65.7)."""
    out = []
    for received, p in packets(path):
        if received and len(p) >= 14 and p[0] == 0x04 and p[1] == 0x3E and p[3] == 0x07:
            handle, tx, _txt, rx, _rxt = struct.unpack("<HHHHH", p[4:14])
            out.append((handle & 0x0FFF, tx, rx))
    return out


def commands(path):
    """Opcodes of every command sent, in order."""
    return [p[1] | p[2] << 8 for received, p in packets(path) if not received and len(p) >= 4 and p[0] == 0x01]


def att_and_disconnections(path):
    """Per connection handle, in order: ("sent" | "received", ATT opcode) for each ATT PDU's first
    fragment (L2CAP channel 0x0004) and ("disconnected", reason) for Disconnection Complete (7.7.5)."""
    out = {}
    for received, p in packets(path):
        if len(p) >= 10 and p[0] == 0x02:
            handle, flags = (p[1] | p[2] << 8) & 0x0FFF, p[2] >> 4
            if flags & 0x3 != 0x1 and (p[7] | p[8] << 8) == 0x0004:  # not a continuation; ATT channel
                out.setdefault(handle, []).append(("received" if received else "sent", p[9]))
        elif received and len(p) >= 7 and p[0] == 0x04 and p[1] == 0x05 and p[3] == 0x00:
            out.setdefault(p[4] | p[5] << 8, []).append(("disconnected", p[6]))
    return out


def ends_with_unconfirmed_indication_then_remote_disconnect(path):
    """True when some link's last ATT PDU was an indication we sent (0x1D) that no confirmation (0x1E)
    answered before the peer ended the link (Disconnection Complete, Remote User Terminated 0x13)."""
    for events in att_and_disconnections(path).values():
        atts = [e for e in events if e[0] != "disconnected"]
        ends = [e for e in events if e[0] == "disconnected"]
        if atts and atts[-1] == ("sent", 0x1D) and ends and ends[-1] == ("disconnected", 0x13):
            return True
    return False


# ATT responses and the confirmation (Core 5.4 Vol 3 Part F 3.4): a peer answering what our host sent.
ATT_ANSWERS = {0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x1E, 0x21}


@dataclass
class Link:
    handle: int
    role: str  # "central" or "peripheral": ours, as LE Connection Complete reports it
    peer: str
    up: float
    down: float | None = None
    reason: int | None = None
    att_received: int = 0
    att_own: int = 0  # of those, PDUs the peer sent of its own: not a response or confirmation to ours
    asked: float | None = None  # when our host sent HCI Disconnect for it (7.1.6)
    read_sent: float | None = None  # when our host first asked to read its payload (see `links`)


def links(path):
    """Every link in the capture, in the order they came up: LE (Enhanced) Connection Complete with
    success (7.7.65.1, 7.7.65.10), its Disconnection Complete (7.7.5), when our host asked to end it,
    how many ATT PDUs the peer sent on it, and when our host first asked to read a value on it (a Read
    Request, or a Read By Type of a 128-bit UUID: the Herald payload read by UUID)."""
    out, live = [], {}
    for received, t, p in records(path):
        if received and len(p) >= 8 and p[0] == 0x04 and p[1] == 0x3E and p[3] in (0x01, 0x0A) and p[4] == 0:
            handle, role = (p[5] | p[6] << 8) & 0x0FFF, p[7]
            peer = ":".join(f"{b:02X}" for b in p[9:15][::-1])
            link = Link(handle, "central" if role == 0 else "peripheral", peer, t)
            live[handle] = link
            out.append(link)
        elif received and len(p) >= 7 and p[0] == 0x04 and p[1] == 0x05 and p[3] == 0x00:
            link = live.pop(p[4] | p[5] << 8, None)
            if link:
                link.down, link.reason = t, p[6]
        elif not received and len(p) >= 7 and p[0] == 0x01 and p[1] == 0x06 and p[2] == 0x04:
            link = live.get((p[4] | p[5] << 8) & 0x0FFF)
            if link and link.asked is None:
                link.asked = t
        elif len(p) >= 10 and p[0] == 0x02:
            handle, flags = (p[1] | p[2] << 8) & 0x0FFF, p[2] >> 4
            if flags & 0x3 != 0x1 and (p[7] | p[8] << 8) == 0x0004 and handle in live:
                if received:
                    live[handle].att_received += 1
                    live[handle].att_own += p[9] not in ATT_ANSWERS
                elif live[handle].read_sent is None and (p[9] == 0x0A or (p[9] == 0x08 and (p[5] | p[6] << 8) == 21)):
                    # A Read Request, or a Read By Type of a 128-bit type (opcode, two handles and
                    # the UUID: 21 octets): the payload read by UUID. Discovery's Read By Type asks
                    # for the 16-bit 0x2803 (7 octets).
                    live[handle].read_sent = t
    return out


def peak_links(links_, role=None):
    """The most links up at once (of one role, if given)."""
    edges = []
    for link in links_:
        if role is None or link.role == role:
            edges += [(link.up, 1), (link.down if link.down is not None else float("inf"), -1)]
    peak = n = 0
    for _t, d in sorted(edges, key=lambda e: (e[0], e[1])):
        n += d
        peak = max(peak, n)
    return peak


def own_address_timeline(path):
    """What our host asked of the controller that puts an address on air, in order, with the random
    address in use at that moment: ("random", addr) for each LE Set Random Address (7.8.4), then
    ("advertising", own address type), ("active scan", type) or ("initiating", type) for each LE Set
    Advertising Enable on, LE Set Scan Enable on with an active scan configured, and LE Create
    Connection (7.8.9, 7.8.11, 7.8.12); each of those three as (what, own address type, random address)."""
    out, random, adv_own, scan_active, scan_own = [], None, None, False, None
    for received, _t, p in records(path):
        if received or len(p) < 4 or p[0] != 0x01:
            continue
        opcode, params = p[1] | p[2] << 8, p[4:]
        if opcode == 0x2005 and len(params) >= 6:
            random = ":".join(f"{b:02X}" for b in params[:6][::-1])
            out.append(("random", random))
        elif opcode == 0x2006 and len(params) >= 6:
            adv_own = params[5]
        elif opcode == 0x200A and params[:1] == b"\x01":
            out.append(("advertising", adv_own, random))
        elif opcode == 0x200B and len(params) >= 6:
            scan_active, scan_own = params[0] == 1, params[5]
        elif opcode == 0x200C and params[:1] == b"\x01" and scan_active:
            out.append(("active scan", scan_own, random))
        elif opcode == 0x200D and len(params) >= 13:
            out.append(("initiating", params[12], random))
    return out


def connection_parameter_requests(path):
    """(handle, interval min, interval max) of every L2CAP Connection Parameter Update Request we sent
    (LE signalling channel 0x0005, code 0x12; Core 5.4 Vol 3 Part A 4.20)."""
    out = []
    for received, p in packets(path):
        if received or len(p) < 21 or p[0] != 0x02:
            continue
        handle = struct.unpack("<H", p[1:3])[0] & 0x0FFF
        cid = struct.unpack("<H", p[7:9])[0]
        if cid == 0x0005 and p[9] == 0x12:
            out.append((handle, struct.unpack("<H", p[13:15])[0], struct.unpack("<H", p[15:17])[0]))
    return out
