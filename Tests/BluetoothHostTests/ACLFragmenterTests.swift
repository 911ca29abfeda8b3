import Testing
@testable import BluetoothHost

@Suite struct ACLFragmenterTests {
    @Test func reproducesBumbleFragmentationByteForByte() {
        let payload = CapturedACL.readByTypePayload
        var sink = ACLTestSink()
        let n = ACLFragmenter.writeAll(handle: 1, channel: .att, payload: payload.span, maxDataLength: 27, to: &sink)
        #expect(n == 2)
        #expect(sink.h4Packets() == [CapturedACL.readByTypeFirst, CapturedACL.readByTypeContinuation])
    }

    @Test func singlePacketWhenItFits() {
        let payload: [UInt8] = [0x02, 0xF7, 0x00]
        var sink = ACLTestSink()
        ACLFragmenter.writeAll(handle: 1, channel: .att, payload: payload.span, maxDataLength: 251, to: &sink)
        // Same bytes as the captured MTU request except PB 0b00 (host → controller start).
        #expect(sink.bytes == aclHex("02 01 00 07 00 03 00 04 00 02 f7 00"))
    }

    @Test func roundTripThroughReassemblerForManySizes() throws {
        for payloadLength in [0, 1, 22, 23, 27, 100, 247, 512] {
            let payload = (0..<payloadLength).map { UInt8(truncatingIfNeeded: $0 * 31 + payloadLength) }
            for maxData in [1, 2, 3, 4, 5, 27, 64, 251] {
                var sink = ACLTestSink()
                let n = ACLFragmenter.writeAll(handle: 0x0042, channel: .att, payload: payload.span,
                                               maxDataLength: maxData, to: &sink)
                let packets = sink.h4Packets()
                #expect(packets.count == n)
                #expect(n == (payloadLength + 4 + maxData - 1) / maxData)
                var run = ReassemblyRun<512>()
                for (i, p) in packets.enumerated() {
                    // Handle preserved; PB 0b00 first, 0b01 after; no packet above the data length.
                    #expect(p[1] == 0x42 && p[2] & 0x0F == 0)
                    #expect(p[2] >> 4 == (i == 0 ? 0b00 : 0b01))
                    #expect(p.count - 5 <= maxData)
                    try run.feed(p)
                }
                #expect(run.pdus.count == 1)
                #expect(run.pdus.first?.1 == payload, "payload \(payloadLength) data \(maxData)")
            }
        }
    }

    @Test func resumesOneFragmentAtATime() {
        let payload = (0..<100).map { UInt8($0) }
        guard var f = ACLFragmenter(handle: 3, channel: .att, payloadLength: payload.count, maxDataLength: 27) else {
            Issue.record("fragmenter refused valid arguments")
            return
        }
        #expect(f.fragmentCount == 4)
        #expect(f.nextPacketLength == 32)
        var sink = ACLTestSink()
        #expect(f.writeNext(payload: payload.span, to: &sink))
        #expect(f.remainingFragments == 3)
        // Credits ran out; the caller keeps `f` and resumes later.
        let saved = f
        var rest = ACLTestSink()
        var copy = saved
        while copy.writeNext(payload: payload.span, to: &rest) {}
        #expect(copy.isFinished && copy.nextPacketLength == 0)
        #expect(!copy.writeNext(payload: payload.span, to: &rest))
        var all = ACLTestSink()
        ACLFragmenter.writeAll(handle: 3, channel: .att, payload: payload.span, maxDataLength: 27, to: &all)
        #expect(sink.bytes + rest.bytes == all.bytes)
        #expect(rest.h4Packets().last?.count == 5 + (104 - 81))
    }

    @Test func refusesInvalidArguments() {
        #expect(ACLFragmenter(handle: 0x0F00, channel: .att, payloadLength: 1, maxDataLength: 27) == nil)
        #expect(ACLFragmenter(handle: 1, channel: .att, payloadLength: 0x1_0000, maxDataLength: 27) == nil)
        #expect(ACLFragmenter(handle: 1, channel: .att, payloadLength: 1, maxDataLength: 0) == nil)
        guard var f = ACLFragmenter(handle: 1, channel: .att, payloadLength: 5, maxDataLength: 27) else {
            Issue.record("valid arguments refused")
            return
        }
        let wrong: [UInt8] = [1, 2, 3]
        var sink = ACLTestSink()
        #expect(!f.writeNext(payload: wrong.span, to: &sink))
        #expect(sink.bytes.isEmpty)
    }
}
