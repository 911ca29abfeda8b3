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
        var queue = ACLOutboundQueue<8, 32>()
        let payload = CapturedACL.readByTypePayload
        #expect(try queue.enqueue(handle: 1, channel: .att, payload: payload.span, maxDataLength: 27) == 2)
        var credits = Self.credits(1, handles: [1])
        var sink = ACLTestSink()
        #expect(queue.drain(credits: &credits, into: &sink) == 1)
        #expect(sink.h4Packets() == [CapturedACL.readByTypeFirst])
        #expect(queue.count == 1)
        // Nothing moves without credits.
        #expect(queue.drain(credits: &credits, into: &sink) == 0)
        credits.completed(handle: 1, count: 1)
        #expect(queue.drain(credits: &credits, into: &sink) == 1)
        #expect(sink.h4Packets() == [CapturedACL.readByTypeFirst, CapturedACL.readByTypeContinuation])
        #expect(queue.isEmpty && queue.sent == 2)
    }

    @Test func neverIdleWhileHoldingCreditsAndData() throws {
        var queue = ACLOutboundQueue<16, 32>()
        let payload = [UInt8](repeating: 0x5A, count: 60)  // 3 fragments each
        try queue.enqueue(handle: 1, channel: .att, payload: payload.span, maxDataLength: 27)
        try queue.enqueue(handle: 2, channel: .att, payload: payload.span, maxDataLength: 27)
        var credits = Self.credits(10, handles: [1, 2])
        var sink = ACLTestSink()
        #expect(queue.drain(credits: &credits, into: &sink) == 6)
        #expect(queue.isEmpty)
        #expect(credits.available == 4)
        // With fewer credits than packets, every credit is used.
        try queue.enqueue(handle: 1, channel: .att, payload: payload.span, maxDataLength: 27)
        try queue.enqueue(handle: 2, channel: .att, payload: payload.span, maxDataLength: 27)
        #expect(queue.drain(credits: &credits, into: &sink) == 4)
        #expect(credits.available == 0 && queue.count == 2)
    }

    @Test func roundRobinAcrossLinksKeepsPerLinkOrder() throws {
        var queue = ACLOutboundQueue<16, 32>(perLinkLimit: 16)
        // Busy link 1 queues 9 packets first; links 2 and 3 queue after it.
        let big = (0..<(9 * 27 - 4)).map { UInt8(truncatingIfNeeded: $0) }
        #expect(try queue.enqueue(handle: 1, channel: .att, payload: big.span, maxDataLength: 27) == 9)
        let small: [UInt8] = [0x52, 0x12, 0x00, 0xAA]
        try queue.enqueue(handle: 3, channel: .att, payload: small.span, maxDataLength: 27)
        try queue.enqueue(handle: 2, channel: .att, payload: small.span, maxDataLength: 27)
        try queue.enqueue(handle: 2, channel: .att, payload: small.span, maxDataLength: 27)
        var credits = Self.credits(64, handles: [1, 2, 3])
        var sink = ACLTestSink()
        queue.drain(credits: &credits, into: &sink)
        // Links 2 and 3 are served within the first round, not after all nine of link 1's packets.
        #expect(aclHandles(sink) == [1, 2, 3, 1, 2, 1, 1, 1, 1, 1, 1, 1])
        // Link 1's fragments left in order: reassembling them gives the PDU back.
        var run = ReassemblyRun<512>()
        for p in sink.h4Packets() where p[1] == 1 { try run.feed(p) }
        #expect(run.pdus.count == 1 && run.pdus.first?.1 == big)
    }

    @Test func perLinkLimitLeavesRoomForOtherLinks() throws {
        var queue = ACLOutboundQueue<8, 32>()  // default limit: 6 of 8
        #expect(queue.perLinkLimit == 6)
        let payload = [UInt8](repeating: 1, count: 23)  // one 27-byte fragment
        for _ in 0..<6 { try queue.enqueue(handle: 1, channel: .att, payload: payload.span, maxDataLength: 27) }
        #expect(throws: ACLQueueError.linkLimit(limit: 6)) {
            try queue.enqueue(handle: 1, channel: .att, payload: payload.span, maxDataLength: 27)
        }
        try queue.enqueue(handle: 2, channel: .att, payload: payload.span, maxDataLength: 27)
        try queue.enqueue(handle: 3, channel: .att, payload: payload.span, maxDataLength: 27)
        #expect(queue.freeSlots == 0)
        #expect(throws: ACLQueueError.full(needed: 1, free: 0)) {
            try queue.enqueue(handle: 4, channel: .att, payload: payload.span, maxDataLength: 27)
        }
    }

    @Test func pduIsQueuedWholeOrNotAtAll() throws {
        var queue = ACLOutboundQueue<4, 32>(perLinkLimit: 4)
        let three = [UInt8](repeating: 2, count: 60)
        try queue.enqueue(handle: 1, channel: .att, payload: three.span, maxDataLength: 27)
        #expect(throws: ACLQueueError.full(needed: 3, free: 1)) {
            try queue.enqueue(handle: 2, channel: .att, payload: three.span, maxDataLength: 27)
        }
        #expect(queue.count == 3 && queue.count(handle: 2) == 0)
        #expect(throws: ACLQueueError.packetTooLarge(length: 5 + 64, slotSize: 32)) {
            try queue.enqueue(handle: 2, channel: .att, payload: three.span, maxDataLength: 251)
        }
        #expect(throws: ACLQueueError.invalidArgument) {
            try queue.enqueue(handle: 0x0F00, channel: .att, payload: three.span, maxDataLength: 27)
        }
    }

    @Test func disconnectionDropsOnlyThatLinksPackets() throws {
        var queue = ACLOutboundQueue<8, 32>(perLinkLimit: 8)
        let payload = [UInt8](repeating: 3, count: 40)  // 2 fragments
        try queue.enqueue(handle: 1, channel: .att, payload: payload.span, maxDataLength: 27)
        try queue.enqueue(handle: 2, channel: .att, payload: payload.span, maxDataLength: 27)
        #expect(queue.removeAll(handle: 1) == 2)
        #expect(queue.droppedOnDisconnect == 2)
        var credits = Self.credits(8, handles: [2])
        var sink = ACLTestSink()
        #expect(queue.drain(credits: &credits, into: &sink) == 2)
        #expect(aclHandles(sink) == [2, 2])
    }

    @Test func packetsForUnknownHandlesAreDroppedWithoutBlockingOthers() throws {
        var queue = ACLOutboundQueue<8, 32>(perLinkLimit: 8)
        let payload: [UInt8] = [1, 2, 3]
        try queue.enqueue(handle: 5, channel: .att, payload: payload.span, maxDataLength: 27)
        try queue.enqueue(handle: 6, channel: .att, payload: payload.span, maxDataLength: 27)
        var credits = Self.credits(8, handles: [6])  // 5 was never opened (or already closed)
        var sink = ACLTestSink()
        #expect(queue.drain(credits: &credits, into: &sink) == 1)
        #expect(aclHandles(sink) == [6])
        #expect(queue.droppedUnknownHandle == 1 && queue.isEmpty)
        #expect(credits.inFlight == 1)
    }

    @Test func prebuiltPacketsAreQueuedAsIs() throws {
        var queue = ACLOutboundQueue<4, 64>()
        let first = CapturedACL.readByTypeFirst
        try queue.enqueue(packet: first.span)
        #expect(queue.count(handle: 1) == 1)
        let notACL: [UInt8] = [0x01, 0x03, 0x0C, 0x00, 0x00]
        #expect(throws: ACLQueueError.invalidArgument) { try queue.enqueue(packet: notACL.span) }
        var credits = Self.credits(1, handles: [1])
        var sink = ACLTestSink()
        queue.drain(credits: &credits, into: &sink)
        #expect(sink.bytes == CapturedACL.readByTypeFirst)
    }
}
