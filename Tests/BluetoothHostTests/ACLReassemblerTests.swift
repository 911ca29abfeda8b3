import Testing
@testable import BluetoothHost

/// Feeds H4 ACL packets (indicator included) and collects completed PDUs and errors.
struct ReassemblyRun<let capacity: Int> {
    var reassembler = ACLReassembler<capacity>()
    var pdus: [(L2CAPChannelID, [UInt8])] = []
    var errors: [ACLReassemblyError] = []

    mutating func feed(_ h4: [UInt8]) throws {
        let packet = try HCIACLDataPacket(parsing: h4.span.extracting(1...))
        do {
            if case .complete(let channel, let length) = try reassembler.receive(packet) {
                let payload = reassembler.payload
                precondition(payload.count == length)
                pdus.append((channel, (0..<payload.count).map { payload[$0] }))
            }
        } catch {
            errors.append(error)
        }
    }

    /// Feeds raw ACL data with an explicit boundary flag (handle 1).
    mutating func feed(_ boundary: HCIACLPacketBoundary, _ data: [UInt8]) {
        do {
            if case .complete = try reassembler.receive(boundary: boundary, data: data.span) {
                let payload = reassembler.payload
                pdus.append((reassembler.channel, (0..<payload.count).map { payload[$0] }))
            }
        } catch {
            errors.append(error)
        }
    }
}

/// A B-frame (basic header + payload) for `payload` on `channel`.
func bFrame(_ channel: UInt16, _ payload: [UInt8]) -> [UInt8] {
    [UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), UInt8(channel & 0xFF), UInt8(channel >> 8)] + payload
}

/// Splits `frame` at the given fragment sizes (the last takes the rest); first fragment flagged start.
func split(_ frame: [UInt8], sizes: [Int]) -> [(HCIACLPacketBoundary, [UInt8])] {
    var out: [(HCIACLPacketBoundary, [UInt8])] = []
    var i = 0
    var k = 0
    while i < frame.count {
        let n = k < sizes.count ? sizes[k] : frame.count - i
        let end = min(frame.count, i + n)
        out.append((i == 0 ? .firstFlushable : .continuing, Array(frame[i..<end])))
        i = end
        k += 1
    }
    return out
}

@Suite struct ACLReassemblerTests {
    @Test func capturedTwoFragmentPDU() throws {
        var run = ReassemblyRun<247>()
        try run.feed(CapturedACL.readByTypeFirst)
        #expect(run.pdus.isEmpty)
        #expect(run.reassembler.isInProgress)
        try run.feed(CapturedACL.readByTypeContinuation)
        #expect(run.pdus.count == 1)
        #expect(run.pdus.first?.0 == .att)
        #expect(run.pdus.first?.1 == CapturedACL.readByTypePayload)
        #expect(run.pdus.first?.1.first == 0x09)  // ATT Read By Type Response
        #expect(run.errors.isEmpty)
        #expect(run.reassembler.completedPDUs == 1)
    }

    @Test func capturedWholePDUInOnePacket() throws {
        var run = ReassemblyRun<64>()
        try run.feed(CapturedACL.readByTypeWhole)
        try run.feed(CapturedACL.mtuRequest)
        #expect(run.pdus.count == 2)
        #expect(run.pdus[0].1 == CapturedACL.readByTypePayload)
        #expect(run.pdus[1].1 == [0x02, 0xF7, 0x00])
    }

    @Test func mtu247ATTPDUIn27ByteControllerPackets() {
        // A 247-byte ATT PDU: B-frame of 251 bytes, 10 packets of ≤27 bytes.
        let att = (0..<247).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        let pieces = split(bFrame(0x0004, att), sizes: Array(repeating: 27, count: 10))
        #expect(pieces.count == 10)
        #expect(pieces.last?.1.count == 251 - 9 * 27)
        var run = ReassemblyRun<247>()
        for (i, (pb, data)) in pieces.enumerated() {
            run.feed(pb, data)
            #expect(run.pdus.count == (i == pieces.count - 1 ? 1 : 0))
        }
        #expect(run.pdus.first?.1 == att)
        #expect(run.errors.isEmpty)
    }

    @Test func everySplitSizeAndHeaderSplits() {
        let payload = (0..<100).map { UInt8($0) }
        let frame = bFrame(0x0005, payload)
        for size in 1...frame.count {
            var run = ReassemblyRun<100>()
            for (pb, data) in split(frame, sizes: Array(repeating: size, count: frame.count)) { run.feed(pb, data) }
            #expect(run.pdus.count == 1, "size \(size)")
            #expect(run.pdus.first?.0 == .leSignaling)
            #expect(run.pdus.first?.1 == payload, "size \(size)")
            #expect(run.errors.isEmpty)
        }
        // Irregular splits, including a basic header split 1+3 and 3+1.
        for sizes in [[1, 3, 50], [3, 1, 2, 2, 90], [2, 2, 0, 96], [4, 100], [5, 7, 11, 13, 17, 19]] {
            var run = ReassemblyRun<100>()
            for (pb, data) in split(frame, sizes: sizes) { run.feed(pb, data) }
            #expect(run.pdus.first?.1 == payload, "sizes \(sizes)")
        }
    }

    @Test func emptyPayloadCompletesImmediately() {
        var run = ReassemblyRun<8>()
        run.feed(.firstFlushable, [0x00, 0x00, 0x04, 0x00])
        #expect(run.pdus.count == 1)
        #expect(run.pdus.first?.1 == [])
    }

    @Test func declaredLengthAboveCapacityDropsWholePDU() {
        var run = ReassemblyRun<23>()
        let frame = bFrame(0x0004, Array(repeating: 0xAB, count: 60))
        for (pb, data) in split(frame, sizes: [27, 27]) { run.feed(pb, data) }
        #expect(run.errors == [.pduTooLarge(declared: 60, capacity: 23)])
        #expect(run.pdus.isEmpty)
        #expect(run.reassembler.oversizedPDUs == 1)
        // The oversized PDU's continuations were swallowed, not reported as orphans.
        #expect(run.reassembler.orphanContinuations == 0)
        #expect(!run.reassembler.isInProgress)
        // The link keeps working.
        run.feed(.firstFlushable, bFrame(0x0004, [0x0A, 0x03, 0x00]))
        #expect(run.pdus.first?.1 == [0x0A, 0x03, 0x00])
        // A capacity-sized PDU is accepted.
        run.feed(.firstFlushable, bFrame(0x0004, Array(repeating: 1, count: 23)))
        #expect(run.pdus.count == 2)
    }

    @Test func fragmentsLongerThanDeclaredAreDropped() {
        var run = ReassemblyRun<64>()
        // Declares 5 bytes but the start packet carries 6.
        run.feed(.firstFlushable, [0x05, 0x00, 0x04, 0x00, 1, 2, 3, 4, 5, 6])
        #expect(run.errors == [.lengthOverrun(declared: 5, received: 6)])
        // Declares 6, continuation brings the total to 8.
        run.feed(.firstFlushable, [0x06, 0x00, 0x04, 0x00, 1, 2, 3])
        run.feed(.continuing, [4, 5, 6, 7, 8])
        #expect(run.errors.last == .lengthOverrun(declared: 6, received: 8))
        #expect(run.pdus.isEmpty)
        #expect(run.reassembler.overruns == 2)
        // Nothing in progress afterwards: the next continuation is an orphan.
        run.feed(.continuing, [9])
        #expect(run.errors.last == .continuationWithoutStart)
    }

    @Test func newStartDiscardsUnfinishedPDU() {
        var run = ReassemblyRun<64>()
        run.feed(.firstFlushable, [0x0A, 0x00, 0x04, 0x00, 1, 2, 3])  // wants 10, has 3
        run.feed(.firstFlushable, bFrame(0x0006, [0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07]))
        #expect(run.reassembler.discardedIncomplete == 1)
        #expect(run.pdus.count == 1)
        #expect(run.pdus.first?.0 == .smp)
        #expect(run.errors.isEmpty)
        // Start that only carries part of the basic header, then a new start: also discarded.
        run.feed(.firstFlushable, [0x03, 0x00])
        run.feed(.firstFlushable, bFrame(0x0004, [0x01]))
        #expect(run.reassembler.discardedIncomplete == 2)
        #expect(run.pdus.count == 2)
    }

    @Test func continuationWithoutStartIsDroppedAndCounted() throws {
        var run = ReassemblyRun<64>()
        try run.feed(CapturedACL.readByTypeContinuation)
        #expect(run.errors == [.continuationWithoutStart])
        #expect(run.reassembler.orphanContinuations == 1)
        #expect(run.pdus.isEmpty)
        try run.feed(CapturedACL.readByTypeFirst)
        try run.feed(CapturedACL.readByTypeContinuation)
        #expect(run.pdus.count == 1)
    }

    @Test func broadcastFlagRejected() throws {
        var r = ACLReassembler<16>()
        let bytes: [UInt8] = [0x01, 0x60, 0x07, 0x00, 0x03, 0x00, 0x04, 0x00, 0x02, 0xF7, 0x00]
        let packet = try HCIACLDataPacket(parsing: bytes.span)
        #expect(throws: ACLReassemblyError.notPointToPoint) { _ = try r.receive(packet) }
    }

    @Test func resetForgetsPartialPDU() {
        var run = ReassemblyRun<64>()
        run.feed(.firstFlushable, [0x0A, 0x00, 0x04, 0x00, 1])
        run.reassembler.reset()
        run.feed(.continuing, [2])
        #expect(run.errors == [.continuationWithoutStart])
        #expect(run.reassembler.discardedIncomplete == 0)
    }
}
