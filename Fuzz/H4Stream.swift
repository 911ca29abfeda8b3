// libFuzzer target: the controller→host byte stream. Arbitrary bytes go through H4Framer (Core 5.4
// Vol 4 Part A) and the whole host (BluetoothStack = HCIHost + LEStack: bring-up, events, ACL,
// L2CAP, the ATT server over a Herald-shaped database) with a test H4Output. Built by Tools/fuzz.
// Input: the first byte's low 6 bits set the size of the pieces the rest is delivered in (1…64 bytes,
// time advancing 7 ms per piece, timers run when due), which exercises the framer's
// resynchronisation; its top bit picks the starting point: a host just started (bring-up ahead) or
// one already brought up against a scripted controller (so the bytes reach connections, ACL, ATT).
// Invariants: no trap or over-read; every packet the framer hands over is one whole packet of a known
// type whose length field matches; every packet the host sends is a well-formed HCI command
// (length octet matches, ≤ 255 parameter bytes) or ACL packet (length field matches, ≤ 251 bytes,
// valid handle, start fragments carry an L2CAP basic header).
import BluetoothHost
import Herald

func check(_ condition: Bool, _ message: StaticString) {
    if !condition { fatalError("invariant: \(message)") }
}

func checkInbound(_ p: Span<UInt8>) {
    check(p.count >= 2 && p.count <= 260, "inbound packet size")
    switch p[0] {
    case 0x04: check(p.count >= 3 && p.count == 3 + Int(p[2]), "event length")
    case 0x02:
        check(p.count >= 5, "ACL header")
        check(p.count == 5 + (Int(p[3]) | Int(p[4]) << 8), "ACL length")
    case 0x01: check(p.count >= 4 && p.count == 4 + Int(p[3]), "command length")
    case 0x03: check(p.count >= 4 && p.count == 4 + Int(p[3]), "SCO length")
    case 0x05:
        check(p.count >= 5, "ISO header")
        check(p.count == 5 + (Int(p[3]) | Int(p[4] & 0x3F) << 8), "ISO length")
    default: check(false, "known packet type")
    }
}

struct Output: H4Output {
    var sent = 0
    var record = false
    var queue: [[UInt8]] = []
    mutating func send(h4 p: Span<UInt8>) {
        sent += 1
        if record {
            var copy: [UInt8] = []
            for i in 0..<p.count { copy.append(p[i]) }
            queue.append(copy)
        }
        check(p.count >= 1, "packet has a type")
        switch p[0] {
        case 0x01:
            check(p.count >= 4 && p.count == 4 + Int(p[3]), "command length octet matches")
        case 0x02:
            check(p.count >= 5, "ACL header")
            let handle = (UInt16(p[1]) | UInt16(p[2]) << 8) & 0x0FFF
            let boundary = (p[2] >> 4) & 0x3
            let length = Int(p[3]) | Int(p[4]) << 8
            check(p.count == 5 + length, "ACL length matches")
            check(length <= 251, "ACL within the LE data length")
            check(handle <= 0x0EFF, "valid handle")
            check(boundary != 0x3 && boundary != 0x2 || length >= 4, "start fragment has an L2CAP header")
        default:
            check(false, "host sends only commands and ACL data")
        }
    }
    mutating func didReceive(h4 p: Span<UInt8>) { checkInbound(p) }
}

struct FramerHandler: H4PacketHandler {
    var packets = 0
    mutating func h4Packet(type: H4PacketType, packet: Span<UInt8>) {
        packets += 1
        check(packet.count > 0 && packet[0] == type.rawValue, "packet starts with its type")
        checkInbound(packet)
    }
}

struct App: LEApplication {
    var payload: [UInt8] = [0x10, 0x03, 0x3A, 0x00, 0x01] + [UInt8](repeating: 0x5A, count: 16)
    mutating func read<S: ByteSink>(id: UInt16, link: UInt16, offset: Int, into sink: inout S) -> ATTErrorCode? {
        guard id == 1 else { return .readNotPermitted }
        guard offset <= payload.count else { return .invalidOffset }
        for b in payload[offset...] { sink.append(b) }
        return nil
    }
    mutating func write(id: UInt16, link: UInt16, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
        check(id == 2, "only the signal characteristic is written through the app")
        check(link <= HCIACLDataHeader.maxHandle, "a link named by its connection handle")
        return nil
    }
}

typealias Stack = BluetoothStack<App, 2, 32, 512>

func makeStack() -> Stack {
    do {
        var db = try GATTDatabase<32, 512, 2>(deviceName: Array("HERALD".utf8).span)
        try db.addPrimaryService(HeraldIdentifiers.serviceUUID)
        try db.addCharacteristic(HeraldIdentifiers.payloadCharacteristicUUID, properties: .read,
                                 permissions: .read, value: .dynamic(id: 1))
        try db.addCharacteristic(HeraldIdentifiers.androidSignalCharacteristicUUID,
                                 properties: .write | .writeWithoutResponse | .notify,
                                 permissions: .write, value: .dynamic(id: 2))
        var seed = InlineArray<6, UInt8>(repeating: 0x11)
        seed[5] = 0xC3
        return Stack(configuration: HostConfiguration(randomAddressSeed: seed), database: db, app: App())
    } catch { fatalError("database") }
}

nonisolated(unsafe) let pristine = makeStack()

/// A Zephyr-like controller that answers every command at once: enough to bring the host up.
func answer(_ p: [UInt8]) -> [UInt8] {
    guard p.count >= 4, p[0] == 0x01 else { return [] }
    let opcode = UInt16(p[1]) | UInt16(p[2]) << 8
    func complete(_ params: [UInt8]) -> [UInt8] {
        [0x04, 0x0E, UInt8(3 + params.count), 0x01, p[1], p[2]] + params
    }
    switch opcode {
    case 0x1001: return complete([0, 0x0D, 0, 0, 0x0D, 0xF1, 0x05, 0, 0])      // Read Local Version
    case 0x1002:                                                                  // Supported Commands
        var bitmap = [UInt8](repeating: 0xFF, count: 64)
        bitmap[41] = 0  // no LE Read Buffer Size v2
        return complete([0] + bitmap)
    case 0x1003: return complete([0] + [UInt8](repeating: 0, count: 8))
    case 0x1009: return complete([0, 0, 0, 0, 0, 0, 0])                          // no public address
    case 0x2002: return complete([0, 0xFB, 0x00, 4])                             // LE buffers: 4 × 251
    case 0x2003: return complete([0, 0xFF, 0x01, 0, 0, 0, 0, 0, 0])
    case 0x202F: return complete([0, 0xFB, 0x00, 0x48, 0x08, 0xFB, 0x00, 0x48, 0x08])
    case 0xFC01: return complete([0, 0x02, 0x00, 0x01, 0x00, 0x01, 0x03, 0x07, 0, 0, 0, 0, 0])
    case 0xFC02:
        var bitmap = [UInt8](repeating: 0, count: 64)
        bitmap[0] = 0x3F; bitmap[1] = 0x01
        return complete([0] + bitmap)
    case 0xFC09: return complete([0, 0x01, 0x11, 0x22, 0x33, 0x44, 0x55, 0xD6] + [UInt8](repeating: 0xAB, count: 16))
    case 0x200D, 0x0406, 0x2013: return [0x04, 0x0F, 0x04, 0, 0x01, p[1], p[2]]  // Command Status
    default: return complete([0])
    }
}

func makeReadyStack() -> Stack {
    var stack = makeStack()
    var output = Output(record: true)
    var now: UInt64 = 0
    stack.start(now: now, output: &output)
    for _ in 0..<500 where !stack.hci.isReady {
        if output.queue.isEmpty {
            guard let d = stack.nextDeadline else { break }
            now = max(now + 1, d)
            stack.tick(now: now, output: &output)
            continue
        }
        let reply = answer(output.queue.removeFirst())
        if !reply.isEmpty { stack.receive(reply.span, now: now, output: &output) }
    }
    guard stack.hci.isReady else { fatalError("scripted bring-up did not finish: \(stack.hci.state)") }
    // Answer whatever the application queued on becoming ready.
    while !output.queue.isEmpty {
        let reply = answer(output.queue.removeFirst())
        if !reply.isEmpty { stack.receive(reply.span, now: now, output: &output) }
    }
    return stack
}

nonisolated(unsafe) let ready = makeReadyStack()

func fuzzOne(_ input: Span<UInt8>) {
    guard input.count > 0 else { return }
    let piece = 1 + Int(input[0] & 0x3F)
    let startReady = input[0] & 0x80 != 0
    let stream = input.extracting(1..<input.count)

    var framer = H4Framer<260>()
    var handler = FramerHandler()
    var offset = 0
    while offset < stream.count {
        let end = min(stream.count, offset + piece)
        framer.feed(stream.extracting(offset..<end), to: &handler)
        offset = end
    }
    check(framer.counters.packets == handler.packets, "framer counts what it hands over")

    var stack = startReady ? ready : pristine
    var output = Output()
    var now: UInt64 = 1_000
    if !startReady { stack.start(now: now, output: &output) }
    offset = 0
    while offset < stream.count {
        let end = min(stream.count, offset + piece)
        stack.receive(stream.extracting(offset..<end), now: now, output: &output)
        offset = end
        now += 7
        if let deadline = stack.nextDeadline, deadline <= now { stack.tick(now: now, output: &output) }
    }
    // Let every pending timer fire once (command timeouts, ATT transaction timeouts).
    now += 60_000
    stack.tick(now: now, output: &output)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = UnsafeBufferPointer(start: size > 0 ? data : nil, count: size)
    fuzzOne(buffer.span)
    return 0
}
