"""A Bumble central that connects to a GATT server and exercises it, printing one JSON result.

usage: python gatt_central.py TRANSPORT OWN_ADDRESS TARGET_ADDRESS SCENARIO JSON_ARGS

Scenarios:
  exercise   discover everything, read the long value, write short/command/long values, subscribe to
             the notifying and indicating characteristics and collect `count` values from each.
             args: {"mtu": 23|247, "count": N, "writes": [{"hex": ..., "mode": "request"|"command"}]}
  malformed  send raw ATT PDUs on channel 0x0004 and record the PDU that answers each, then do a
             normal read. args: {"pdus": [hex, ...], "read": HANDLE}

Progress goes to stderr; the last stdout line is the JSON result. A line "connected" is printed as
soon as the link is up; with {"gate": true} the central then waits for a line on stdin before it
starts, so a test can connect several centrals first. {"hold": S} keeps the link S seconds longer.
{"awaitDisconnect": S}: after the scenario, print "waiting" and wait up to S seconds for the server to
end the link; the result says with which HCI reason ("disconnectReason", null if it did not).
"""
import asyncio
import json
import sys
import time

from bumble.core import UUID
from bumble.device import ConnectionParametersPreferences, Device, Peer
from bumble.hci import HCI_LE_1M_PHY, Address
from bumble.transport import open_transport

LONG = UUID("4c4d0002-7e57-4e3a-9d8c-5a1f3c2b1a00")
WRITABLE = UUID("4c4d0003-7e57-4e3a-9d8c-5a1f3c2b1a00")
NOTIFYING = UUID("4c4d0004-7e57-4e3a-9d8c-5a1f3c2b1a00")
INDICATING = UUID("4c4d0005-7e57-4e3a-9d8c-5a1f3c2b1a00")


def uuid_text(u) -> str:
    # Bumble prints 16-bit UUIDs as "UUID-16:180F (...)"; use plain lower-case hex, like our tools.
    b = bytes(u.to_bytes())
    if len(b) == 2:
        return b[::-1].hex()
    h = b[::-1].hex()
    return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


async def connect(device: Device, target: str, interval_ms=None):
    # Bumble asks for 15-30 ms (Zephyr's central then picks 30 ms); `interval_ms` pins one interval.
    preferences = None
    if interval_ms:
        preferences = {HCI_LE_1M_PHY: ConnectionParametersPreferences(connection_interval_min=interval_ms,
                                                                      connection_interval_max=interval_ms)}
    connection = await device.connect(Address(target, Address.RANDOM_DEVICE_ADDRESS), timeout=10,
                                      connection_parameters_preferences=preferences)
    print("connected", flush=True)
    return connection


async def discover(peer: Peer) -> list:
    services = []
    for s in await peer.discover_services():
        chars = []
        for c in await peer.discover_characteristics(service=s):
            descs = await peer.discover_descriptors(characteristic=c)
            chars.append({"uuid": uuid_text(c.uuid), "handle": c.handle, "properties": int(c.properties),
                          "descriptors": [{"uuid": uuid_text(d.type), "handle": d.handle} for d in descs]})
        services.append({"uuid": uuid_text(s.uuid), "handle": s.handle, "end": s.end_group_handle,
                         "characteristics": chars})
    return services


def find(peer: Peer, uuid: UUID):
    for s in peer.services:
        for c in s.characteristics:
            if c.uuid == uuid:
                return c
    raise KeyError(str(uuid))


async def exercise(connection, args: dict) -> dict:
    result = {"timings": {}}
    peer = Peer(connection)
    t = time.monotonic()
    if args.get("mtu", 23) > 23:
        result["mtu"] = await peer.request_mtu(args["mtu"])
        result["timings"]["mtu"] = time.monotonic() - t
    else:
        result["mtu"] = 23
    t = time.monotonic()
    result["services"] = await discover(peer)
    result["timings"]["discovery"] = time.monotonic() - t

    t = time.monotonic()
    long_char = find(peer, LONG)
    result["long"] = (await peer.read_value(long_char)).hex()
    result["timings"]["longRead"] = time.monotonic() - t
    descriptors = await peer.discover_descriptors(characteristic=long_char)
    for d in descriptors:
        if uuid_text(d.type) == "2901":
            result["longDescription"] = (await peer.read_value(d)).decode()

    writable = find(peer, WRITABLE)
    result["writes"] = []
    for w in args.get("writes", []):
        value = bytes.fromhex(w["hex"])
        t = time.monotonic()
        await peer.write_value(writable, value, with_response=w["mode"] == "request")
        result["timings"].setdefault("writes", []).append(time.monotonic() - t)
        if w["mode"] == "command":
            await asyncio.sleep(0.2)
        result["writes"].append((await peer.read_value(writable)).hex())

    count = args.get("count", 0)
    got = {"notify": [], "indicate": []}
    done = asyncio.get_running_loop().create_future()

    def listener(kind):
        def on_value(value):
            got[kind].append(value.hex())
            if len(got["notify"]) >= count and len(got["indicate"]) >= count and not done.done():
                done.set_result(None)
        return on_value

    t = time.monotonic()
    if count:
        await peer.subscribe(find(peer, NOTIFYING), listener("notify"))
        await peer.subscribe(find(peer, INDICATING), listener("indicate"))
        try:
            await asyncio.wait_for(done, 20)
        except asyncio.TimeoutError:
            result["timeout"] = True
    result["timings"]["subscriptions"] = time.monotonic() - t
    result["notifications"] = got["notify"]
    result["indications"] = got["indicate"]
    return result


async def malformed(device: Device, connection, args: dict) -> dict:
    manager = device.l2cap_channel_manager
    original = manager.fixed_channels[0x0004]
    inbox: asyncio.Queue = asyncio.Queue()

    def tap(conn, pdu):
        inbox.put_nowait(bytes(pdu))
        # Responses nobody asked for only make Bumble's client log a warning.
        try:
            original(conn, pdu)
        except Exception as e:  # noqa: BLE001 - malformed answers must not stop the peer
            print(f"bumble could not parse {bytes(pdu).hex()}: {e}", file=sys.stderr)

    manager.register_fixed_channel(0x0004, tap)
    answers = []
    for h in args["pdus"]:
        connection.send_l2cap_pdu(0x0004, bytes.fromhex(h))
        try:
            answers.append((await asyncio.wait_for(inbox.get(), args.get("wait", 1.0))).hex())
        except asyncio.TimeoutError:
            answers.append(None)
    manager.register_fixed_channel(0x0004, original)
    peer = Peer(connection)
    value = await peer.read_value(args["read"])
    return {"answers": answers, "read": value.hex(), "connected": connection.handle is not None}


async def main(transport: str, own: str, target: str, scenario: str, args: dict) -> None:
    async with await open_transport(transport) as (source, sink):
        device = Device.with_hci("bumble-central", Address(own), source, sink)
        t = time.monotonic()
        await device.power_on()
        powered = time.monotonic() - t
        t = time.monotonic()
        connection = await connect(device, target, args.get("interval"))
        connected = time.monotonic() - t
        disconnected = asyncio.get_running_loop().create_future()
        connection.on("disconnection", lambda reason: disconnected.done() or disconnected.set_result(reason))
        if args.get("gate"):
            # Wait for the test's "go" on stdin, so several centrals can be connected before any starts.
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        if scenario == "exercise":
            result = await exercise(connection, args)
        elif scenario == "malformed":
            result = await malformed(device, connection, args)
        else:
            raise SystemExit(f"unknown scenario {scenario}")
        result["disconnectedEarly"] = disconnected.done()
        result.setdefault("timings", {}).update(powerOn=powered, connect=connected)
        if args.get("hold"):
            await asyncio.sleep(args["hold"])
        if args.get("awaitDisconnect"):
            print("waiting", flush=True)
            try:
                result["disconnectReason"] = await asyncio.wait_for(disconnected, args["awaitDisconnect"])
            except asyncio.TimeoutError:
                result["disconnectReason"] = None
        if not disconnected.done():
            await connection.disconnect()
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5])))
