"""The Wireshark dissector for Herald (Tools/wireshark/herald.lua), run by `tshark -X lua_script:...` on
captures herald made (Tests/Interop/captures, made once by captures/make.py; README there): what tshark
prints must equal what herald itself reported for the same run, and damaged packets must give expert
items, never a Lua error.

- a.btsnoop / b.btsnoop: our wearable A reading a Herald "Android" phone and wearable B and being read by
  B; A's immediate send to both; compared with each wearable's JSON events (a.jsonl, b.jsonl);
- scan.btsnoop: `herald scan --json --read-payloads` reading `herald beacon` (venue payload, premises
  name), compared with scan.json;
- cpp-scan.btsnoop: the same scan reading herald-for-cpp's wearable (fixed test payload 0x08) and venue
  beacon with `--byte-order apps`, compared with cpp-scan.json, in both byte orders;
- the shared captures (../shared/captures): a Bumble central's signal writes, the payload in two
  20-octet fragments and the payload sharing in a Prepare/Execute Write; with the fragment removed, the
  message cannot reassemble.

No radio runs here: the module takes a few seconds (tshark starts once per check).
"""
import json
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
CAPTURES = HERE / "captures"
SHARED = HERE.parents[1].parent / "shared" / "captures"
DISSECTOR = HERE.parents[1] / "Tools" / "wireshark" / "herald.lua"
TSHARK = shutil.which("tshark")
pytestmark = [pytest.mark.timeout(120), pytest.mark.skipif(TSHARK is None, reason="tshark not installed")]


def tshark(capture, display_filter, *fields, prefs=()):
    """Rows (lists of field texts) tshark prints for `fields` of the packets `display_filter` keeps. Fails
    on any Lua error or dissector bug message."""
    args = [TSHARK, "-X", f"lua_script:{DISSECTOR}", "-r", str(capture), "-Y", display_filter, "-T", "fields",
            "-E", "occurrence=a", "-E", "aggregator=|"]
    for p in prefs:
        args += ["-o", p]
    for f in fields:
        args += ["-e", f]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    for stream in (r.stdout, r.stderr):
        assert "Lua Error" not in stream and "herald.internal" not in stream, stream[-2000:]
    return [line.split("\t") for line in r.stdout.splitlines()]


def verbose(capture, display_filter, prefs=()):
    args = [TSHARK, "-X", f"lua_script:{DISSECTOR}", "-r", str(capture), "-Y", display_filter, "-V"]
    for p in prefs:
        args += ["-o", p]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "Lua Error" not in r.stdout + r.stderr, (r.stdout + r.stderr)[-2000:]
    return r.stdout


def events(name, *kinds):
    lines = [json.loads(l) for l in (CAPTURES / f"{name}.jsonl").read_text().splitlines()]
    return [e for e in lines if e.get("event") in kinds]


def reads(capture, prefs=()):
    """(direction, payload hex, short name) of every payload read in a capture: direction 1 = this host
    read it (a response received), 0 = this host served it."""
    return [(int(r[0]), r[1], r[2]) for r in
            tshark(capture, "herald.read", "frame.p2p_dir", "herald.read", "herald.payload.short_name", prefs=prefs)]


def scan_devices(name):
    return json.loads((CAPTURES / name).read_text())["summary"]["devices"]


@pytest.mark.parametrize("name", ["a", "b"])
def test_payload_reads_are_the_ones_the_wearable_reported(name):
    capture = CAPTURES / f"{name}.btsnoop"
    got = reads(capture)
    read = [(1, e["payload"], e["shortName"]) for e in events(name, "didRead")]
    served = [(0, e["payload"]) for e in events(name, "payload-read")]
    assert read and served
    assert [r for r in got if r[0] == 1] == read
    assert [r[:2] for r in got if r[0] == 0] == served


def test_signal_writes_are_the_ones_the_wearable_received():
    """B's capture: A's immediate send, decoded as B's JSON events report it."""
    rows = tshark(CAPTURES / "b.btsnoop", "herald.signal.action && frame.p2p_dir == 1", "herald.signal.action",
                  "herald.signal.data")
    signals = [e for e in events("b", "signal")]
    assert signals and [{"4": "immediate-send"}[r[0]] for r in rows] == [e["type"] for e in signals]
    assert [r[1] for r in rows] == [e["data"] for e in signals]
    # A wrote the same message to the phone and to B.
    sent = tshark(CAPTURES / "a.btsnoop", "herald.signal.action && frame.p2p_dir == 0", "herald.signal.data")
    assert sent == [["cafe01"], ["cafe01"]]


def test_adverts_show_the_service_uuid_and_the_phones_pseudo_address():
    rows = {tuple(r) for r in tshark(CAPTURES / "a.btsnoop", "herald.advert.address", "herald.advert.address",
                                     "herald.advert.service", "herald.advert.pseudo_address", "herald.advert.manufacturer")}
    # The phone (peers/herald_phone.py, address C1:00:00:00:00:01) advertises its address reversed as the
    # pseudo device address under 0xFFFA; wearable B only the specification's service UUID.
    phone = {r for r in rows if r[0] == "C1:00:00:00:00:01"}
    assert phone == {("C1:00:00:00:00:01", "428132af-4746-42d3-801e-4572d65bfd9b", "0100000000c1", "0xfffa")}, rows
    assert len(rows - phone) == 1 and all(r[1] == "428132af-4746-42d3-801e-4572d65bfd9b" and r[2] == "" for r in rows - phone)


FIELDS = ["herald.read", "herald.payload.short_name", "herald.payload.type", "herald.payload.protocol",
          "herald.payload.country", "herald.payload.state", "herald.payload.location", "herald.payload.client",
          "herald.payload.name", "herald.payload.byte_order"]


def decoded(capture, prefs=()):
    out = {}
    for r in tshark(capture, "herald.read", *FIELDS, prefs=prefs):
        f = dict(zip(FIELDS, r))
        out[f["herald.read"]] = dict(
            shortName=f["herald.payload.short_name"], type=f["herald.payload.type"],
            protocolAndVersion=int(f["herald.payload.protocol"], 16), country=int(f["herald.payload.country"]),
            state=int(f["herald.payload.state"]), byteOrder=f["herald.payload.byte_order"],
            locationCode=int(f["herald.payload.location"]) if f["herald.payload.location"] else None,
            clientIdentifier=int(f["herald.payload.client"]) if f["herald.payload.client"] else None,
            premisesName=f["herald.payload.name"] or None)
    return out


def from_scan(d):
    fields = d["payloadFields"]
    return dict(shortName=d["payloadShortName"], type=fields["type"], protocolAndVersion=fields["protocolAndVersion"],
                country=fields["country"], state=fields["state"], byteOrder=fields["byteOrder"],
                locationCode=fields.get("locationCode"), clientIdentifier=fields.get("clientIdentifier"),
                premisesName=fields.get("premisesName"))


@pytest.mark.parametrize("capture, scan, prefs", [
    ("scan.btsnoop", "scan.json", ()),
    ("cpp-scan.btsnoop", "cpp-scan.json", ("herald.byte_order:apps",)),
], ids=["our-beacon", "herald-for-cpp"])
def test_payloads_decode_as_herald_scan_decoded_them(capture, scan, prefs):
    devices = [d for d in scan_devices(scan) if d.get("payload")]
    assert devices
    got = decoded(CAPTURES / capture, prefs)
    assert got == {d["payload"]: from_scan(d) for d in devices}
    # The adverts the dissector marks are those of the devices whose payload the scan read, with the
    # Herald service UUIDs the scan listed.
    adverts = tshark(CAPTURES / capture, "herald.advert.address", "herald.advert.address", "herald.advert.service")
    for d in devices:
        services = {s for r in adverts if r[0] == d["address"] for s in r[1].split("|")}
        assert services == {s for s in d["services"] if s in ("fcf6", "428132af-4746-42d3-801e-4572d65bfd9b")}, d


def test_the_byte_order_preference_decides_the_codes():
    """herald-for-cpp writes its codes little-endian: read as the specification says, 826 is 14851."""
    spec = decoded(CAPTURES / "cpp-scan.btsnoop")
    test = spec["083a030000d202964900000000"]
    assert (test["country"], test["byteOrder"], test["clientIdentifier"]) == (14851, "spec", 15132822938195066880)


def test_fragmented_signal_writes_reassemble():
    """The shared capture: a Bumble central writes the four signal messages to a phone, the payload in two
    20-octet Write Requests and the payload sharing in a Prepare/Execute Write (../shared/captures/README.md)."""
    capture = SHARED / "herald-phone-receives-signal-writes.btsnoop"
    if not capture.exists():
        pytest.skip(f"{capture} missing (../shared beside the repository)")
    rows = tshark(capture, "herald.signal.action", "herald.signal.action", "herald.signal.rssi", "herald.signal.payload",
                  "herald.signal.shared", "herald.signal.data", "herald.signal.fragment_count")
    assert rows == [
        ["1", "", "10033a0002" + "ee" * 16, "", "", "2"],
        ["2", "-42", "", "", "", ""],
        ["3", "-42", "", "10033a0003" + "11" * 16 + "|10033a0004" + "22" * 16, "", "4"],
        ["4", "", "", "", "cafe01", ""],
    ]
    assert tshark(capture, "herald.signal.action == 1 && herald.payload.country == 826", "herald.payload.state") == [["2"]]


def write_without(capture, out, drop):
    """`capture` less the frames (numbered from 1) in `drop`."""
    data = capture.read_bytes()
    kept, offset, n = bytearray(data[:16]), 16, 0
    while offset + 24 <= len(data):
        incl = struct.unpack(">I", data[offset + 4:offset + 8])[0]
        n += 1
        if n not in drop:
            kept += data[offset:offset + 24 + incl]
        offset += 24 + incl
    out.write_bytes(bytes(kept))


def test_a_message_that_does_not_reassemble_is_an_expert_item(tmp_path):
    capture = SHARED / "herald-phone-receives-signal-writes.btsnoop"
    if not capture.exists():
        pytest.skip(f"{capture} missing (../shared beside the repository)")
    # Frame 59 is the payload's second fragment: the next messages' bytes join the first fragment (the RSSI
    # message's 3 octets still leave it short) until the payload sharing overruns its declared 24 octets,
    # where SignalReassembler rejects the write too.
    damaged = tmp_path / "lost-fragment.btsnoop"
    write_without(capture, damaged, {59})
    experts = tshark(damaged, "herald.signal.malformed", "frame.number")
    assert len(experts) == 1
    text = verbose(damaged, "herald.signal.malformed")
    assert "signal write dropped: 70 octets written for a message of 24" in text, text[-3000:]
    # Only the first fragment, then the link closes: the Disconnection Complete carries the item.
    cut = tmp_path / "cut.btsnoop"
    later_writes = {int(r[0]) for r in tshark(capture, "btatt && frame.number > 56", "frame.number")}
    write_without(capture, cut, later_writes)
    rows = tshark(cut, "herald.signal.unreassembled", "frame.number", "herald.signal.fragment")
    assert rows and rows[0][1] == "56", rows
    assert "the link closed with 20 octets of a signal message still incomplete" in verbose(cut, "herald.signal.unreassembled")


def damage(capture, out, old, new):
    data = capture.read_bytes()
    assert data.count(old) == 1 and len(old) == len(new)
    out.write_bytes(data.replace(old, new))


@pytest.mark.parametrize("old, new, why", [
    # The premises name's section declares 15 octets where 10 are left.
    (bytes.fromhex("100a436166c3a9204e6f7264"), bytes.fromhex("100f436166c3a9204e6f7264"),
     "extended data section 0x10 declares 15 octets, 10 left"),
    # Not UTF-8 text.
    (bytes.fromhex("100a436166c3a9204e6f7264"), bytes.fromhex("100a436166c3ff204e6f7264"),
     "extended data 0x10: text that is not UTF-8"),
    # The fixed test payload's protocol on a 21-octet payload.
    (bytes.fromhex("30033a000000003039100a"), bytes.fromhex("08033a000000003039100a"),
     "fixed test payload of 21 octets, exactly 13 expected"),
], ids=["section-overrun", "not-utf8", "test-payload-length"])
def test_a_damaged_payload_is_an_expert_item(tmp_path, old, new, why):
    damaged = tmp_path / "damaged.btsnoop"
    damage(CAPTURES / "scan.btsnoop", damaged, old, new)
    assert len(tshark(damaged, "herald.payload.malformed", "frame.number")) == 1
    assert why in verbose(damaged, "herald.payload.malformed")


def test_without_gatt_discovery_the_handle_preferences_decide(tmp_path):
    """The capture less its discovery: the default handles (those our own wearable serves, 0x0010 and
    0x0012) still find both characteristics; with the preference at 0 the writes are left alone."""
    capture = SHARED / "herald-phone-receives-signal-writes.btsnoop"
    if not capture.exists():
        pytest.skip(f"{capture} missing (../shared beside the repository)")
    discovery = {int(r[0]) for r in tshark(capture, "btatt.opcode >= 0x04 && btatt.opcode <= 0x11", "frame.number")}
    bare = tmp_path / "no-discovery.btsnoop"
    write_without(capture, bare, discovery)
    assert len(tshark(bare, "herald.signal.action", "frame.number")) == 4
    assert tshark(bare, "herald.signal.action", "frame.number", prefs=("herald.signal_handle:0",)) == []
