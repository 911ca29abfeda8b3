// Fixtures shared by the benchmarks: recorded controller traffic, a scripted controller for bring-up,
// and H4 outputs that do not allocate (so malloc counts measure the stack alone).
import BluetoothHost
#if canImport(Glibc)
import Glibc
#endif

/// An H4 output that keeps only the last packet and a count: what a UART driver costs, no more.
struct LastPacketOutput: H4Output {
    var last = FixedBytes<260>()
    var packets = 0
    var bytes = 0
    mutating func send(h4 packet: Span<UInt8>) {
        last.removeAll()
        last.append(contentsOf: packet)
        packets += 1
        bytes += packet.count
    }
}

/// Records every packet (setup only: it allocates).
struct RecordingOutput: H4Output {
    var packets: [[UInt8]] = []
    mutating func send(h4 packet: Span<UInt8>) {
        var bytes: [UInt8] = []
        for i in packet.indices { bytes.append(packet[i]) }
        packets.append(bytes)
    }
}

/// Controller-to-host H4 packets from the btsnoop captures in `$HERALD_CAPTURES`, else `shared/captures`
/// beside the repository (as CI lays it out), or nil when they are not there.
enum Captures {
    static func directory() -> String? {
        // #filePath = <repo>/Benchmarks/Benchmarks/HeraldBenchmarks/Support.swift
        var parts = #filePath.split(separator: "/").map(String.init)
        parts.removeLast(4)
        var candidates = ["/" + parts.joined(separator: "/") + "/../shared/captures"]
        if let env = getenv("HERALD_CAPTURES") { candidates.insert(String(cString: env), at: 0) }
        return candidates.first { access($0, F_OK) == 0 }
    }

    static func read(_ path: String) -> [UInt8]? {
        guard let f = fopen(path, "rb") else { return nil }
        defer { fclose(f) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&chunk, 1, chunk.count, f)
            if n <= 0 { break }
            out += chunk[0..<n]
        }
        return out
    }

    /// Every received (controller → host) packet of every capture, H4 indicator included.
    static func receivedPackets() -> [[UInt8]] {
        guard let dir = directory() else { return [] }
        let names = ["herald-central-reads-phone", "herald-phone-peripheral",
                     "herald-phone-receives-signal-writes", "herald-writer-signal-messages"]
        var packets: [[UInt8]] = []
        for name in names {
            guard let file = read("\(dir)/\(name).btsnoop"), file.count > 16 else { continue }
            // btsnoop v1: 16-octet file header, then records of a 24-octet header (original length,
            // included length, flags, drops, timestamp; big-endian) and the packet.
            var offset = 16
            func u32(_ at: Int) -> Int { Int(file[at]) << 24 | Int(file[at + 1]) << 16 | Int(file[at + 2]) << 8 | Int(file[at + 3]) }
            while offset + 24 <= file.count {
                let included = u32(offset + 4), flags = u32(offset + 8)
                let start = offset + 24
                guard start + included <= file.count else { break }
                if flags & 1 == 1 { packets.append(Array(file[start..<(start + included)])) }  // bit 0: received
                offset = start + included
            }
        }
        return packets
    }

    /// The received packets concatenated and repeated to at least `size` octets: a UART stream.
    static func stream(atLeast size: Int) -> (bytes: [UInt8], packets: Int) {
        var packets = receivedPackets()
        if packets.isEmpty { packets = syntheticPackets() }
        var out: [UInt8] = []
        var count = 0
        while out.count < size {
            for p in packets { out += p; count += 1 }
        }
        return (out, count)
    }

    /// Used when shared/ is absent: events and ACL shaped like the captures.
    static func syntheticPackets() -> [[UInt8]] {
        [
            ScriptedController.commandComplete(0x0C03, [0]),
            [0x04, 0x13, 0x05, 0x01, 0x40, 0x00, 0x01, 0x00],
            [0x02, 0x40, 0x20, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x0A, 0x03, 0x00],
            [0x02, 0x40, 0x20, 0x1B, 0x00, 0x17, 0x00, 0x04, 0x00, 0x0B] + [UInt8](repeating: 0x5A, count: 22),
            [0x04, 0x3E, 0x0C, 0x02, 0x01, 0x00, 0x01, 0x11, 0x22, 0x33, 0x44, 0x55, 0xC6, 0x00, 0xC4],
        ]
    }
}

/// Answers each command as a Zephyr hci_uart controller would (after BringUpTests' FakeController).
struct ScriptedController {
    var aclLength: UInt16 = 251
    var aclCount: UInt8 = 8

    static func commandComplete(_ opcode: UInt16, _ params: [UInt8]) -> [UInt8] {
        [0x04, 0x0E, UInt8(3 + params.count), 0x01, UInt8(opcode & 0xFF), UInt8(opcode >> 8)] + params
    }

    func answer(_ packet: [UInt8]) -> [UInt8] {
        guard packet.first == 0x01, packet.count >= 4 else { return [] }
        let opcode = UInt16(packet[1]) | UInt16(packet[2]) << 8
        switch opcode {
        case 0x0C03: return Self.commandComplete(opcode, [0])
        case 0x1001: return Self.commandComplete(opcode, [0, 0x0D, 0x00, 0x00, 0x0D, 0xF1, 0x05, 0x00, 0x00])
        case 0x1002:
            var bitmap = [UInt8](repeating: 0, count: 64)
            bitmap[15] |= 0x02; bitmap[34] |= 0x01; bitmap[35] |= 0x08
            return Self.commandComplete(opcode, [0] + bitmap)
        case 0x1003: return Self.commandComplete(opcode, [0] + [UInt8](repeating: 0, count: 8))
        case 0x2002: return Self.commandComplete(opcode, [0, UInt8(aclLength & 0xFF), UInt8(aclLength >> 8), aclCount])
        case 0x2003: return Self.commandComplete(opcode, [0, 0xFF, 0x01, 0, 0, 0, 0, 0, 0])
        case 0x1009: return Self.commandComplete(opcode, [0, 0, 0, 0, 0, 0, 0])
        case 0x202F: return Self.commandComplete(opcode, [0, 0xFB, 0x00, 0x48, 0x08, 0xFB, 0x00, 0x48, 0x08])
        case 0xFC01: return Self.commandComplete(opcode, [0, 0x02, 0x00, 0x01, 0x00, 0x01, 0x03, 0x07, 0, 0, 0, 0, 0])
        case 0xFC02:
            var bitmap = [UInt8](repeating: 0, count: 64)
            bitmap[0] = 0x3F; bitmap[1] = 0x01
            return Self.commandComplete(opcode, [0] + bitmap)
        case 0xFC09: return Self.commandComplete(opcode, [0, 0x01, 0x11, 0x22, 0x33, 0x44, 0x55, 0xD6] + [UInt8](repeating: 0xAB, count: 16))
        default:
            // Everything else the host may send (advertising, scanning, data length) succeeds; LE
            // commands that return a connection handle get it back.
            if opcode == 0x2022 { return Self.commandComplete(opcode, [0, packet[4], packet[5]]) }
            return Self.commandComplete(opcode, [0])
        }
    }

    /// Runs bring-up of `stack` to ready against this controller, in simulated time.
    func bringUp<App: LEApplication, let l: Int, let a: Int, let v: Int>(_ stack: inout BluetoothStack<App, l, a, v>) -> UInt64 {
        var now: UInt64 = 0
        var wire = RecordingOutput()
        stack.start(now: now, output: &wire)
        for _ in 0..<10_000 where !stack.hci.isReady {
            while !wire.packets.isEmpty {
                let reply = answer(wire.packets.removeFirst())
                if !reply.isEmpty { stack.receive(reply.span, now: now, output: &wire) }
            }
            if stack.hci.isReady { break }
            guard let d = stack.nextDeadline else { break }
            now = max(now, d)
            stack.tick(now: now, output: &wire)
        }
        precondition(stack.hci.isReady, "bring-up did not finish")
        settle(&stack, now: now, wire: &wire)
        return now
    }

    /// Answers whatever the stack sent until it goes quiet.
    func settle<App: LEApplication, let l: Int, let a: Int, let v: Int>(
        _ stack: inout BluetoothStack<App, l, a, v>, now: UInt64, wire: inout RecordingOutput
    ) {
        var rounds = 0
        while !wire.packets.isEmpty, rounds < 1000 {
            let reply = answer(wire.packets.removeFirst())
            if !reply.isEmpty { stack.receive(reply.span, now: now, output: &wire) }
            rounds += 1
        }
    }

    /// HCI LE Connection Complete (Core 5.4 Vol 4 Part E 7.7.65.1), we are the peripheral.
    static func connectionComplete(handle: UInt16, peer: [UInt8]) -> [UInt8] {
        [0x04, 0x3E, 0x13, 0x01, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), 0x01, 0x01] + peer
            + [0x18, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x00]
    }

    /// One ACL packet carrying an ATT PDU on the fixed channel 0x0004.
    static func attPacket(handle: UInt16, pdu: [UInt8]) -> [UInt8] {
        let l2 = UInt16(pdu.count), acl = l2 + 4
        return [0x02, UInt8(handle & 0xFF), UInt8(handle >> 8 | 0x20), UInt8(acl & 0xFF), UInt8(acl >> 8),
                UInt8(l2 & 0xFF), UInt8(l2 >> 8), 0x04, 0x00] + pdu
    }

    /// Number Of Completed Packets for one packet on `handle` (7.7.19).
    static func completed(handle: UInt16, count: UInt16 = 1) -> [UInt8] {
        [0x04, 0x13, 0x05, 0x01, UInt8(handle & 0xFF), UInt8(handle >> 8), UInt8(count & 0xFF), UInt8(count >> 8)]
    }
}
