#!/usr/bin/env python3
"""Splits the btsnoop captures (btsnoop v1, datalink 1002 = H4) into small seed inputs for the
libFuzzer targets in Fuzz/, one file per seed under Fuzz/Corpus/<target>/ (named by content hash).

  Fuzz/extract_seeds.py [CAPTURES_DIR]   (default: ../shared/captures beside the repo)

Input formats match the targets: H4Stream takes a piece-size byte then controller->host H4 bytes; HCIEvents an event
packet without its indicator; L2CAP and ATTServer/Signal take `[n][n bytes]` records (L2CAP's records
are HCI ACL packets, ATTServer's records are ATT PDUs after one security byte, HeraldPeripheral's are `[link][n][PDU]`, Signal's are signal
writes; GATTClient's are ATT PDUs to the client after a procedure byte); Advert takes `[n][AD data][scan response]`; Payload takes one payload.
"""
import hashlib, os, struct, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAPTURES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "captures")
OUT = os.path.join(ROOT, "Fuzz", "Corpus")
MAX = 2048  # Tools/fuzz runs with -max_len=2048


def records(path):
    """(received_from_controller, h4_bytes) for each record."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"btsnoop\0", path
    version, datalink = struct.unpack(">II", data[8:16])
    assert version == 1 and datalink == 1002, (path, version, datalink)
    off = 16
    while off + 24 <= len(data):
        _orig, incl, flags, _drops, _ts = struct.unpack(">IIIIq", data[off:off + 24])
        off += 24
        yield bool(flags & 1), data[off:off + incl]
        off += incl


seeds = {}


def seed(target, blob):
    if not blob or len(blob) > MAX:
        return
    seeds.setdefault(target, set()).add(bytes(blob))


def framed(items):
    out = bytearray()
    for it in items:
        it = it[:255]
        out += bytes([len(it)]) + it
    return bytes(out)


def acl_pdus(packets):
    """Reassembles L2CAP basic frames from (handle, pb, data) ACL packets: yields (handle, cid, payload)."""
    pending = {}
    for handle, pb, data in packets:
        if pb in (0, 2):
            pending[handle] = bytearray(data)
        elif handle in pending:
            pending[handle] += data
        else:
            continue
        buf = pending[handle]
        if len(buf) >= 4:
            length, cid = struct.unpack("<HH", buf[:4])
            if len(buf) >= 4 + length:
                yield handle, cid, bytes(buf[4:4 + length])
                del pending[handle]


def ad_blocks(event):
    """AD data of LE (Extended) Advertising Reports in an HCI event (without indicator)."""
    if len(event) < 3 or event[0] != 0x3E:
        return
    sub, p = event[2], event[3:]
    try:
        if sub == 0x02:
            n, off = p[0], 1
            for _ in range(n):
                length = p[off + 8]
                yield p[off + 9:off + 9 + length]
                off += 10 + length
        elif sub == 0x0D:
            n, off = p[0], 1
            for _ in range(n):
                length = p[off + 23]
                yield p[off + 24:off + 24 + length]
                off += 24 + length
    except IndexError:
        return


for name in sorted(os.listdir(CAPTURES)):
    if not name.endswith(".btsnoop"):
        continue
    recs = list(records(os.path.join(CAPTURES, name)))
    # H4Stream: the controller->host byte stream, cut at packet boundaries into <= 2 KiB pieces,
    # after the target's first byte (low bits: delivery piece size - 1, 63 = 64-byte pieces).
    # Each chunk twice: for a host just started (0x3f) and for one already up (0xbf, top bit).
    chunk = bytearray()
    for rx, pkt in recs:
        if not rx:
            continue
        if len(chunk) + len(pkt) > MAX - 1:
            seed("H4Stream", b"\x3f" + chunk)
            seed("H4Stream", b"\xbf" + chunk)
            chunk = bytearray()
        chunk += pkt
    seed("H4Stream", b"\x3f" + chunk)
    seed("H4Stream", b"\xbf" + chunk)
    # HCIEvents: every distinct event.
    for rx, pkt in recs:
        if rx and pkt[:1] == b"\x04":
            seed("HCIEvents", pkt[1:])
    # Advertising data from reports and from the Set (Extended) Advertising/Scan Response Data commands.
    ads = []
    for rx, pkt in recs:
        if rx and pkt[:1] == b"\x04":
            ads += list(ad_blocks(pkt[1:]))
        elif not rx and pkt[:1] == b"\x01" and len(pkt) > 4:
            opcode = struct.unpack("<H", pkt[1:3])[0]
            params = pkt[4:]
            if opcode in (0x2008, 0x2009) and params:  # LE Set Advertising / Scan Response Data
                ads.append(params[1:1 + params[0]])
            elif opcode in (0x2037, 0x2038) and len(params) > 4:  # extended variants
                ads.append(params[4:4 + params[3]])
    for i, ad in enumerate(ads):
        scan = ads[i + 1] if i + 1 < len(ads) else b""
        seed("Advert", bytes([len(ad)]) + ad + scan)
    # ACL packets, both directions (each side's host sees what its controller delivers).
    for direction in (True, False):
        acl = []
        for rx, pkt in recs:
            if rx == direction and pkt[:1] == b"\x02" and len(pkt) >= 5:
                hf, length = struct.unpack("<HH", pkt[1:5])
                acl.append((hf & 0x0FFF, (hf >> 12) & 3, pkt[5:5 + length], pkt[1:]))
        # L2CAP: runs of 8 consecutive ACL packets.
        for i in range(0, len(acl), 8):
            seed("L2CAP", framed([a[3] for a in acl[i:i + 8]]))
        pdus = list(acl_pdus((h, pb, d) for h, pb, d, _ in acl))
        att = [p for _, cid, p in pdus if cid == 4]
        # ATTServer: the requests a client sent (what a server receives), in runs of 12.
        requests = [p for p in att if p and (p[0] & 0x40 or p[0] in (0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C,
                                                                      0x0E, 0x10, 0x12, 0x16, 0x18, 0x1E, 0x20))]
        for i in range(0, len(requests), 12):
            seed("ATTServer", b"\x00" + framed(requests[i:i + 12]))
            # HeraldPeripheral: the same requests from the first central, `[link 0][n][PDU]`.
            seed("HeraldPeripheral", b"".join(b"\x00" + framed([r]) for r in requests[i:i + 12]))
        # GATTClient: what a client receives (responses, notifications, indications), in runs of 12,
        # after a procedure byte (0 = Exchange MTU first, as the captured centrals do).
        to_client = [p for p in att if p and p[0] in (0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11,
                                                       0x13, 0x17, 0x19, 0x1B, 0x1D, 0x21, 0x23)]
        for i in range(0, len(to_client), 12):
            for procedure in (0, 1, 2):
                seed("GATTClient", bytes([procedure]) + framed(to_client[i:i + 12]))
        # Signal: values of Write Requests/Commands (the Herald signal writes), in order.
        writes = [p[3:] for p in att if p and p[0] in (0x12, 0x52) and len(p) >= 3]
        if writes:
            seed("Signal", framed(writes))
            for w in writes:
                seed("Signal", framed([w]))
        # Payload: Read Responses and the payloads inside signal messages.
        for p in att:
            if p and p[0] in (0x0B, 0x0D) and len(p) > 1:
                seed("Payload", p[1:])
        for w in writes:
            if len(w) > 3 and w[0] in (0x01, 0x04):
                seed("Payload", w[3:])
            if len(w) > 5 and w[0] == 0x03:
                seed("Payload", w[5:])
                for k in range(5, len(w) - 20, 21):
                    seed("Payload", w[k:k + 21])

for target, blobs in sorted(seeds.items()):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    for b in blobs:
        with open(os.path.join(d, hashlib.sha1(b).hexdigest()[:16]), "wb") as f:
            f.write(b)
    print(f"{target}: {len(blobs)} seeds, {sum(map(len, blobs))} bytes")
