import Testing
@testable import BluetoothHost

/// Deterministic pseudo-random bytes (xorshift), so a failure is reproducible.
struct ACLFuzzBytes {
    var state: UInt64
    mutating func next() -> UInt8 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt8(truncatingIfNeeded: state)
    }
    mutating func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in next() } }
}

/// Malformed input from the controller or a peer must give a typed error or a counted drop, never a
/// trap, and must leave the accounting consistent.
@Suite struct ACLRobustnessTests {
    @Test func randomPacketsThroughTableRouterAndCredits() {
        var rng = ACLFuzzBytes(state: 0x9E37_79B9_7F4A_7C15)
        var table = ConnectionTable<4, 64, NoConnectionExtra>()
        let peer = DeviceAddress(type: .publicDevice, address: .zero)
        for h: UInt16 in 0..<4 {
            _ = try? table.insert(handle: h, role: h.isMultiple(of: 2) ? .central : .peripheral, peer: peer,
                              timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 72))
        }
        var router = L2CAPFixedChannelRouter()
        var credits = ACLCredits<4>()
        credits.configure(leDataLength: 27, leTotalPackets: 6)
        for h: UInt16 in 0..<4 { credits.open(handle: h) }
        var delivered = 0, typedErrors = 0, replies = 0
        for round in 0..<20_000 {
            let length = Int(rng.next() % 40)
            var raw = rng.bytes(length)
            // Bias towards well-formed headers so deeper code runs: small handles, honest lengths.
            if raw.count >= 4 && round % 3 != 0 {
                raw[1] &= 0x30
                raw[0] &= 0x03
                raw[2] = UInt8(raw.count - 4)
                raw[3] = 0
                if raw.count >= 8 && round % 2 == 0 {
                    raw[4] = UInt8(raw.count - 8)
                    raw[5] = 0
                    raw[6] = 4 + (raw[6] % 3)
                    raw[7] = 0
                }
            }
            do {
                let packet = try HCIACLDataPacket(parsing: raw.span)
                let outcome = table.receive(packet) { _, link, channel, payload in
                    var reply = FixedBytes<23>()
                    _ = router.route(channel: channel, payload: payload, role: link.role, reply: &reply)
                    #expect(!reply.overflowed)
                    if reply.count > 0 { replies += 1 }
                }
                if case .delivered = outcome { delivered += 1 }
            } catch {
                typedErrors += 1
            }
            // Random credit traffic.
            let h = UInt16(rng.next() % 6)
            if rng.next() & 1 == 0 { _ = credits.consume(handle: h) } else { credits.completed(handle: h, count: UInt16(rng.next() % 3)) }
            #expect(credits.available + credits.inFlight == credits.total && credits.inFlight >= 0)
        }
        #expect(delivered > 100 && typedErrors > 100 && replies > 10)
        #expect(credits.inFlight == credits.inFlightPerHandleSum)
    }

    @Test func randomSignalingAndSMPPayloadsNeverOverflowTheReply() {
        var rng = ACLFuzzBytes(state: 42)
        let codes: [UInt8] = [0x01, 0x06, 0x07, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x08, 0xFF]
        for _ in 0..<20_000 {
            var pdu = rng.bytes(Int(rng.next() % 30))
            if pdu.count >= 4 {
                pdu[0] = codes[Int(rng.next()) % codes.count]
                if rng.next() & 1 == 0 { pdu[2] = UInt8(pdu.count - 4); pdu[3] = 0 }
            }
            var reply = FixedBytes<23>()
            _ = L2CAPSignalingHandler.handle(pdu.span, role: rng.next() & 1 == 0 ? .central : .peripheral, reply: &reply)
            #expect(!reply.overflowed)
            var smpReply = FixedBytes<23>()
            _ = SMPPairingRefusal.handle(pdu.span, reply: &smpReply)
            #expect(smpReply.count == 0 || smpReply.count == 2)
        }
    }
}
