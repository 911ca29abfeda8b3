import Testing
@testable import BluetoothHost

/// Handles of the packets in an H4 stream, in order.
func aclHandles(_ sink: ACLTestSink) -> [UInt16] {
    sink.h4Packets().map { (UInt16($0[1]) | UInt16($0[2]) << 8) & 0x0FFF }
}

@Suite struct ACLOutboundQueueTests {
    static func credits(_ total: UInt8, handles: [UInt16]) -> ACLCredits<8> {
        var c = ACLCredits<8>()
        c.configure(leDataLength: 27, leTotalPackets: total)
        for h in handles { c.open(handle: h) }
        return c
    }

    @Test func drainSendsCapturedFragmentsAndStopsAtZeroCredits() throws {
        var queue = ACLOutboundQueue<128>()
        let payload = CapturedACL.readByTypePayload
        try queue.enqueue(handle: 1, channel: .att, payload: payload.span)
        #expect(queue.count == 1 && queue.usedOctets == 8 + payload.count)
        var credits = Self.credits(1, handles: [1])
        var sink = ACLTestSink()
        #expect(queue.drain(credits: &credits, into: &sink) == 1)
        // Cut at the controller's 27-octet data length only when sent: the captured first fragment.
        #expect(sink.h4Packets() == [CapturedACL.readByTypeFirst])
        #expect(queue.count == 1)
        // Nothing moves without credits.
        #expect(queue.drain(credits: &credits, into: &sink) == 0)
        credits.completed(handle: 1, count: 1)
        #expect(queue.drain(credits: &credits, into: &sink) == 1)
        #expect(sink.h4Packets() == [CapturedACL.readByTypeFirst, CapturedACL.readByTypeContinuation])
        #expect(queue.isEmpty && queue.sent == 2 && queue.usedOctets == 0)
    }

    @Test func neverIdleWhileHoldingCreditsAndData() throws {
        var queue = ACLOutboundQueue<512>()
        let payload = [UInt8](repeating: 0x5A, count: 60)  // 3 fragments each
        try queue.enqueue(handle: 1, channel: .att, payload: payload.span)
        try queue.enqueue(handle: 2, channel: .att, payload: payload.span)
        var credits = Self.credits(10, handles: [1, 2])
        var sink = ACLTestSink()
        #expect(queue.drain(credits: &credits, into: &sink) == 6)
        #expect(queue.isEmpty)
        #expect(credits.available == 4)
        // With fewer credits than fragments, every credit is used.
        try queue.enqueue(handle: 1, channel: .att, payload: payload.span)
        try queue.enqueue(handle: 2, channel: .att, payload: payload.span)
        #expect(queue.drain(credits: &credits, into: &sink) == 4)
        #expect(credits.available == 0 && queue.count == 2)
    }

    @Test func roundRobinAcrossLinksKeepsPerLinkOrder() throws {
        var queue = ACLOutboundQueue<512>(perLinkLimit: 512)
        // Busy link 1 queues a 9-fragment PDU and a second one first; links 2 and 3 queue after it.
        let big = (0..<(9 * 27 - 4)).map { UInt8(truncatingIfNeeded: $0) }
        let second: [UInt8] = [0x1B, 0x03, 0x00, 0x01]
        try queue.enqueue(handle: 1, channel: .att, payload: big.span)
        try queue.enqueue(handle: 1, channel: .att, payload: second.span)
        let small: [UInt8] = [0x52, 0x12, 0x00, 0xAA]
        try queue.enqueue(handle: 3, channel: .att, payload: small.span)
        try queue.enqueue(handle: 2, channel: .att, payload: small.span)
        try queue.enqueue(handle: 2, channel: .att, payload: small.span)
        var credits = Self.credits(64, handles: [1, 2, 3])
        var sink = ACLTestSink()
        queue.drain(credits: &credits, into: &sink)
        // Links 2 and 3 are served within the first round, not after all nine of link 1's fragments.
        #expect(aclHandles(sink) == [1, 2, 3, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1])
        // Link 1's fragments left in order, its second PDU after the whole first one.
        var run = ReassemblyRun<512>()
        for p in sink.h4Packets() where p[1] == 1 { try run.feed(p) }
        #expect(run.pdus.count == 2 && run.pdus.first?.1 == big && run.pdus.last?.1 == second)
    }

    @Test func perLinkLimitLeavesRoomForOtherLinks() throws {
        var queue = ACLOutboundQueue<248>()  // default limit: 186 of 248 octets
        #expect(queue.perLinkLimit == 186)
        let payload = [UInt8](repeating: 1, count: 23)  // 31 octets queued each
        for _ in 0..<6 { try queue.enqueue(handle: 1, channel: .att, payload: payload.span) }
        #expect(throws: ACLQueueError.linkLimit(limit: 186)) {
            try queue.enqueue(handle: 1, channel: .att, payload: payload.span)
        }
        try queue.enqueue(handle: 2, channel: .att, payload: payload.span)
        #expect(queue.freeOctets == 31)
        try queue.enqueue(handle: 3, channel: .att, payload: payload.span)
        #expect(queue.freeOctets == 0)
        #expect(throws: ACLQueueError.full(needed: 31, free: 0)) {
            try queue.enqueue(handle: 4, channel: .att, payload: payload.span)
        }
    }

    @Test func pduIsQueuedWholeOrNotAtAll() throws {
        var queue = ACLOutboundQueue<100>(perLinkLimit: 100)
        let sixty = [UInt8](repeating: 2, count: 60)
        try queue.enqueue(handle: 1, channel: .att, payload: sixty.span)
        #expect(throws: ACLQueueError.full(needed: 68, free: 32)) {
            try queue.enqueue(handle: 2, channel: .att, payload: sixty.span)
        }
        #expect(queue.count == 1 && queue.count(handle: 2) == 0 && queue.usedOctets == 68)
        #expect(throws: ACLQueueError.invalidArgument) {
            try queue.enqueue(handle: 0x0F00, channel: .att, payload: sixty.span)
        }
    }

    @Test func disconnectionDropsOnlyThatLinksPDUs() throws {
        var queue = ACLOutboundQueue<256>(perLinkLimit: 256)
        let payload = [UInt8](repeating: 3, count: 40)  // 2 fragments
        try queue.enqueue(handle: 2, channel: .att, payload: payload.span)
        try queue.enqueue(handle: 1, channel: .att, payload: payload.span)
        try queue.enqueue(handle: 2, channel: .att, payload: payload.span)
        try queue.enqueue(handle: 1, channel: .att, payload: payload.span)
        #expect(queue.removeAll(handle: 1) == 2)
        #expect(queue.droppedOnDisconnect == 2 && queue.usedOctets == 2 * 48)
        var credits = Self.credits(8, handles: [2])
        var sink = ACLTestSink()
        #expect(queue.drain(credits: &credits, into: &sink) == 4)
        #expect(aclHandles(sink) == [2, 2, 2, 2])
        // Both of link 2's PDUs survived the compaction intact.
        var run = ReassemblyRun<64>()
        for p in sink.h4Packets() { try run.feed(p) }
        #expect(run.pdus.count == 2 && run.pdus.allSatisfy { $0.1 == payload })
    }

    @Test func pdusForUnknownHandlesAreDroppedWithoutBlockingOthers() throws {
        var queue = ACLOutboundQueue<128>(perLinkLimit: 128)
        let payload: [UInt8] = [1, 2, 3]
        try queue.enqueue(handle: 5, channel: .att, payload: payload.span)
        try queue.enqueue(handle: 6, channel: .att, payload: payload.span)
        var credits = Self.credits(8, handles: [6])  // 5 was never opened (or already closed)
        var sink = ACLTestSink()
        #expect(queue.drain(credits: &credits, into: &sink) == 1)
        #expect(aclHandles(sink) == [6])
        #expect(queue.droppedUnknownHandle == 1 && queue.isEmpty)
        #expect(credits.inFlight == 1)
    }

    @Test func fragmentsFollowTheControllersDataLength() throws {
        var queue = ACLOutboundQueue<512>()
        let payload = (0..<247).map { UInt8(truncatingIfNeeded: $0) }
        try queue.enqueue(handle: 1, channel: .att, payload: payload.span)
        var credits = ACLCredits<8>()
        credits.configure(leDataLength: 251, leTotalPackets: 4)
        credits.open(handle: 1)
        var sink = ACLTestSink()
        // 251 octets of data fit the whole 251-octet B-frame: one packet.
        #expect(queue.drain(credits: &credits, into: &sink) == 1)
        #expect(sink.h4Packets().map(\.count) == [5 + 251])
    }
}
