import Testing
@testable import BluetoothHost

/// Collects what the framer delivers, as arrays (tests may allocate).
struct PacketLog: H4PacketHandler {
    var packets: [[UInt8]] = []
    mutating func h4Packet(type: H4PacketType, packet: Span<UInt8>) {
        var copy: [UInt8] = []
        for i in packet.indices { copy.append(packet[i]) }
        packets.append(copy)
    }
}

@Suite struct H4FramerTests {
    // Real packets: Command Complete for Reset, an LE Advertising Report, a 9-byte ACL packet.
    static let commandComplete: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
    static let numCompleted: [UInt8] = [0x04, 0x13, 0x05, 0x01, 0x40, 0x00, 0x01, 0x00]
    static let acl: [UInt8] = [0x02, 0x40, 0x20, 0x05, 0x00, 0x01, 0x00, 0x04, 0x00, 0x02]
    static let stream = commandComplete + acl + numCompleted

    func run(_ chunks: [[UInt8]]) -> (PacketLog, H4FramerCounters) {
        var framer = H4Framer<260>()
        var log = PacketLog()
        for c in chunks { framer.feed(c.span, to: &log) }
        return (log, framer.counters)
    }

    @Test func wholeStreamInOneRead() {
        let (log, counters) = run([Self.stream])
        #expect(log.packets == [Self.commandComplete, Self.acl, Self.numCompleted])
        #expect(counters.skippedBytes == 0 && counters.packets == 3)
    }

    @Test func oneByteAtATime() {
        let (log, _) = run(Self.stream.map { [$0] })
        #expect(log.packets == [Self.commandComplete, Self.acl, Self.numCompleted])
    }

    @Test(arguments: 1..<24) func everySplitPoint(split: Int) {
        let (log, _) = run([Array(Self.stream[..<split]), Array(Self.stream[split...])])
        #expect(log.packets.count == 3)
        #expect(log.packets.last == Self.numCompleted)
    }

    @Test func leadingZeroAfterBoardResetIsSkipped() {
        let (log, counters) = run([[0x00] + Self.commandComplete])
        #expect(log.packets == [Self.commandComplete])
        #expect(counters.skippedBytes == 1)
    }

    @Test func garbageBetweenPacketsIsSkippedAndCounted() {
        let garbage: [UInt8] = [0x00, 0xFF, 0x99, 0x7E, 0x00]
        let (log, counters) = run([Self.commandComplete + garbage + Self.acl])
        #expect(log.packets == [Self.commandComplete, Self.acl])
        #expect(counters.skippedBytes == garbage.count)
    }

    @Test func implausibleHeaderIsRescanned() {
        // 0x04 0x77 looks like an event indicator but 0x77 is no event code: the framer must not
        // trust the next byte as a length, and must find the real packet that follows.
        let (log, counters) = run([[0x04, 0x77] + Self.commandComplete])
        #expect(log.packets == [Self.commandComplete])
        #expect(counters.rejectedHeaders == 1)
        #expect(counters.skippedBytes == 2)
    }

    @Test func aclWithImpossibleHandleIsRejected() {
        // Handle 0xF01 is above 0xEFF: noise, not an ACL header.
        let (log, counters) = run([[0x02, 0x01, 0x0F, 0x02, 0x00] + Self.commandComplete])
        #expect(log.packets == [Self.commandComplete])
        #expect(counters.rejectedHeaders >= 1)
    }

    @Test func oversizePacketIsDroppedAndStreamContinues() {
        // A vendor event can claim 255 bytes; a framer with room for 258 keeps it, but an ACL of
        // 300 bytes does not fit and is discarded whole.
        var framer = H4Framer<260>(maximumACLLength: 1024)
        var log = PacketLog()
        let big: [UInt8] = [0x02, 0x01, 0x00, 0x2C, 0x01] + [UInt8](repeating: 0xAB, count: 300)
        framer.feed((big + Self.commandComplete).span, to: &log)
        #expect(log.packets == [Self.commandComplete])
        #expect(framer.counters.oversizePackets == 1)
    }

    @Test func pullStyleIngestStopsAtEachPacket() {
        var framer = H4Framer<260>()
        let bytes = Self.stream
        let used = framer.ingest(bytes.span)
        #expect(used == Self.commandComplete.count)
        #expect(framer.completedType == .event)
        // Nothing more is consumed until the packet is released.
        #expect(framer.ingest(bytes.span.extracting(used..<bytes.count)) == 0)
        framer.release()
        #expect(framer.completedType == nil)
    }

    @Test func randomGarbageNeverCrashesAndRealPacketsSurvive() {
        var rng = SplitMix(seed: 42)
        var framer = H4Framer<260>(maximumACLLength: 251)
        var log = PacketLog()
        var delivered = 0
        for _ in 0..<200 {
            let noise = (0..<Int(rng.next() % 8)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            framer.feed(noise.span, to: &log)
            // A real packet after noise may be lost only if the noise formed a plausible header
            // swallowing it; most must get through.
            framer.feed(Self.commandComplete.span, to: &log)
        }
        delivered = log.packets.filter { $0 == Self.commandComplete }.count
        #expect(delivered >= 150)
    }

    /// Whole packets in one read are handed over in place and packet bodies are copied in bulk; both
    /// must frame exactly as feeding one byte at a time does, noise, rescans and oversize included.
    @Test(arguments: [1, 2, 3, 7, 64, 1000])
    func chunkingNeverChangesTheOutcome(seed: UInt64) {
        var rng = SplitMix(seed: seed)
        let oversize: [UInt8] = [0x02, 0x01, 0x00, 0x2C, 0x01] + [UInt8](repeating: 0xAB, count: 300)
        let advert: [UInt8] = [0x04, 0x3E, 0x0C, 0x02, 0x01, 0x00, 0x01, 0x11, 0x22, 0x33, 0x44, 0x55, 0xC6, 0x00, 0xC4]
        let longACL: [UInt8] = [0x02, 0x40, 0x20, 0xFB, 0x00] + (0..<251).map { UInt8(truncatingIfNeeded: $0) }
        let pieces = [Self.commandComplete, Self.acl, Self.numCompleted, advert, longACL, oversize,
                      [0x04, 0x77], [0x00], [0x02, 0x01, 0x0F, 0x02, 0x00]]
        var stream: [UInt8] = []
        for _ in 0..<60 { stream += pieces[Int(rng.next() % UInt64(pieces.count))] }
        stream += Self.commandComplete

        let (reference, referenceCounters) = run(stream.map { [$0] })
        let (whole, wholeCounters) = run([stream])
        var chunks: [[UInt8]] = []
        var at = 0
        while at < stream.count {
            let n = min(stream.count - at, 1 + Int(rng.next() % 300))
            chunks.append(Array(stream[at..<(at + n)]))
            at += n
        }
        let (chunked, chunkedCounters) = run(chunks)
        #expect(reference.packets.last == Self.commandComplete)
        #expect(whole.packets == reference.packets)
        #expect(chunked.packets == reference.packets)
        #expect(wholeCounters == referenceCounters)
        #expect(chunkedCounters == referenceCounters)
    }
}

/// A tiny deterministic generator for tests.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
