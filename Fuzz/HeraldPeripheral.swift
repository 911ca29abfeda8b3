// libFuzzer target: the real Herald peripheral (HeraldPeripheralApplication: the Herald GATT
// profile, per-link payload snapshots and signal reassembly) inside the whole host (BluetoothStack),
// brought up against a scripted controller with two centrals connected (handles 0x0040, 0x0041).
// Built by Tools/fuzz; host-only code.
// Input: `[link][n][ATT PDU]…`: each PDU arrives from that central as one ACL packet on CID 0x0004
// (bit 7 of the link byte sends it as a raw HCI event instead, to mix in disconnections and more).
// Invariants: no trap or over-read; everything the host sends is a well-formed command or ACL packet;
// ATT PDUs it sends fit ATT_MTU's maximum (247) and are responses, notifications or indications;
// what the application reports is well formed (payloads ≤ 600 octets, shared payloads whole, the served
// payload a 21-octet Simple payload).
import BluetoothHost
import Herald

func check(_ condition: Bool, _ message: StaticString) {
    if !condition { fatalError("invariant: \(message)") }
}

struct Output: H4Output {
    var record = false
    var queue: [[UInt8]] = []
    mutating func send(h4 p: Span<UInt8>) {
        check(p.count >= 1, "packet has a type")
        switch p[0] {
        case 0x01:
            check(p.count >= 4 && p.count == 4 + Int(p[3]), "command length octet matches")
        case 0x02:
            check(p.count >= 5, "ACL header")
            let length = Int(p[3]) | Int(p[4]) << 8
            check(p.count == 5 + length && length <= 251, "ACL length")
            let boundary = (p[2] >> 4) & 0x3
            if boundary == 0 && length >= 5 {
                let l2capLength = Int(p[5]) | Int(p[6]) << 8
                let cid = UInt16(p[7]) | UInt16(p[8]) << 8
                if cid == 0x0004 {
                    check(l2capLength >= 1 && l2capLength <= 247, "ATT PDU within ATT_MTU")
                    let kind = ATTOpcode(rawValue: p[9]).kind
                    check(kind == .response || kind == .notification || kind == .indication, "server sends responses")
                }
            }
        default:
            check(false, "host sends only commands and ACL data")
        }
        if record {
            var copy: [UInt8] = []
            for i in 0..<p.count { copy.append(p[i]) }
            queue.append(copy)
        }
    }
}

struct Events: HeraldPeripheralDelegate {
    mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink) {
        check(payload.count == 21, "served a Simple payload")
        check(link.handle <= HCIACLDataHeader.maxHandle, "a live link, named by its connection handle")
    }
    mutating func heraldPeripheral(didReceivePayload payload: Span<UInt8>, from link: HeraldLink) {
        check(payload.count <= 600, "received payload within the signal capacity")
    }
    mutating func heraldPeripheral(didShare payloads: SharedPayloadIterator, rssi: Int16, from link: HeraldLink) {
        var it = payloads
        var n = 0
        while true {
            guard let p = try? it.next() else { break }
            check(p.count == it.payloadSize, "whole shared payloads")
            n += 1
        }
        check(n <= payloads.count, "shared payload count")
    }
    mutating func heraldPeripheral(didReceiveImmediateSend data: Span<UInt8>, from link: HeraldLink) {
        check(data.count <= 600, "immediate data within capacity")
    }
    mutating func heraldPeripheral(didRejectSignalWrite fragment: Span<UInt8>, from link: HeraldLink) {
        check(fragment.count <= 247, "fragment within ATT_MTU")
    }
}

typealias App = HeraldPeripheralApplication<SimplePayloadDataSupplier<InlineSecretKey>, Events, 2, 128, 600, StandardServerOffer>
typealias Stack = BluetoothStack<App, 2, 32, 256>

func answer(_ p: [UInt8]) -> [UInt8] {
    guard p.count >= 4, p[0] == 0x01 else { return [] }
    let opcode = UInt16(p[1]) | UInt16(p[2]) << 8
    func complete(_ params: [UInt8]) -> [UInt8] { [0x04, 0x0E, UInt8(3 + params.count), 0x01, p[1], p[2]] + params }
    switch opcode {
    case 0x1001: return complete([0, 0x0D, 0, 0, 0x0D, 0xF1, 0x05, 0, 0])
    case 0x1002:
        var bitmap = [UInt8](repeating: 0xFF, count: 64)
        bitmap[41] = 0
        return complete([0] + bitmap)
    case 0x1003: return complete([0] + [UInt8](repeating: 0, count: 8))
    case 0x1009: return complete([0, 0, 0, 0, 0, 0, 0])
    case 0x2002: return complete([0, 0xFB, 0x00, 8])
    case 0x2003: return complete([0, 0xFF, 0x01, 0, 0, 0, 0, 0, 0])
    case 0x2018: return complete([0, 1, 2, 3, 4, 5, 6, 7, 8])                     // LE Rand
    case 0x2017: return complete([0] + [UInt8](repeating: 0x5C, count: 16))      // LE Encrypt
    case 0x202F: return complete([0, 0xFB, 0x00, 0x48, 0x08, 0xFB, 0x00, 0x48, 0x08])
    case 0xFC01: return complete([0, 0x02, 0x00, 0x01, 0x00, 0x01, 0x03, 0x07, 0, 0, 0, 0, 0])
    case 0xFC02:
        var bitmap = [UInt8](repeating: 0, count: 64)
        bitmap[0] = 0x3F; bitmap[1] = 0x01
        return complete([0] + bitmap)
    case 0xFC09: return complete([0, 0x01, 0x11, 0x22, 0x33, 0x44, 0x55, 0xD6] + [UInt8](repeating: 0xAB, count: 16))
    case 0x200D, 0x0406, 0x2013: return [0x04, 0x0F, 0x04, 0, 0x01, p[1], p[2]]
    default: return complete([0])
    }
}

func connectionComplete(handle: UInt16, peer: UInt8) -> [UInt8] {
    // LE Connection Complete (Core 5.4 Vol 4 Part E 7.7.65.1), we are peripheral.
    [0x04, 0x3E, 19, 0x01, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x01, 0x01,
     peer, 2, 3, 4, 5, 0xC6, 24, 0, 0, 0, 72, 0, 0]
}

func settle(_ stack: inout Stack, _ output: inout Output, now: inout UInt64) {
    for _ in 0..<500 {
        if output.queue.isEmpty {
            if stack.hci.isReady { return }
            guard let d = stack.nextDeadline else { return }
            now = max(now + 1, d)
            stack.tick(now: now, output: &output)
            continue
        }
        let reply = answer(output.queue.removeFirst())
        if !reply.isEmpty { stack.receive(reply.span, now: now, output: &output) }
    }
}

func makeConnectedStack() -> Stack {
    do {
        let key = [UInt8](repeating: 0x42, count: 2048)
        let source = try SimplePayloadDataSupplier(secretKey: key.span,
                                             header: PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 1))
        // 2026-06-01T00:00:00Z.
        let clock = HeraldClock(unixMillisAtZero: 1_780_272_000_000)
        var peripheral = try HeraldPeripheral<SimplePayloadDataSupplier<InlineSecretKey>, StandardServerOffer, 2, 128, 600>(
            source: source, advertising: HeraldAdvertisingConfiguration(), clock: clock)
        var db = try GATTDatabase<32, 256, 2>(deviceName: Array("HERALD".utf8).span)
        try peripheral.install(into: &db)
        var seed = InlineArray<6, UInt8>(repeating: 0x11)
        seed[5] = 0xC3
        var stack = Stack(configuration: HostConfiguration(randomAddressSeed: seed), database: db,
                          app: App(peripheral: peripheral, delegate: Events()))
        var output = Output(record: true)
        var now: UInt64 = 0
        stack.start(now: now, output: &output)
        settle(&stack, &output, now: &now)
        guard stack.hci.isReady else { fatalError("scripted bring-up did not finish") }
        for (handle, peer) in [(UInt16(0x0040), UInt8(0x01)), (0x0041, 0x02)] {
            stack.receive(connectionComplete(handle: handle, peer: peer).span, now: now, output: &output)
            while !output.queue.isEmpty {
                let reply = answer(output.queue.removeFirst())
                if !reply.isEmpty { stack.receive(reply.span, now: now, output: &output) }
            }
        }
        return stack
    } catch { fatalError("setup") }
}

nonisolated(unsafe) let connected = makeConnectedStack()

func fuzzOne(_ input: Span<UInt8>) {
    var stack = connected
    var output = Output()
    var now: UInt64 = 10_000
    var offset = 0
    while offset + 1 < input.count {
        let link = input[offset]
        let n = Int(input[offset + 1])
        offset += 2
        let end = min(input.count, offset + n)
        var packet: [UInt8] = []
        if link & 0x80 != 0 {
            // A raw event: code, length, parameters.
            packet = [0x04]
            for i in offset..<end { packet.append(input[i]) }
        } else {
            let handle: UInt16 = link & 1 == 0 ? 0x0040 : 0x0041
            let length = min(end - offset, 247)
            packet = [0x02, UInt8(handle & 0xFF), UInt8(handle >> 8) | 0x20,
                      UInt8((length + 4) & 0xFF), UInt8((length + 4) >> 8),
                      UInt8(length & 0xFF), UInt8(length >> 8), 0x04, 0x00]
            for i in offset..<(offset + length) { packet.append(input[i]) }
        }
        offset = end
        stack.receive(packet.span, now: now, output: &output)
        now += 50
        if let d = stack.nextDeadline, d <= now { stack.tick(now: now, output: &output) }
    }
    now += 60_000
    stack.tick(now: now, output: &output)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = UnsafeBufferPointer(start: size > 0 ? data : nil, count: size)
    fuzzOne(buffer.span)
    return 0
}
