import Testing
@testable import BluetoothHost

/// A controller that stalls answers late but in order. After a command times out, nothing more is
/// sent until its answer comes (or `lateAnswerGrace` passes): commands sent into the stall exceeded
/// the controller's one credit and had their answers mixed with the late ones (the Zephyr soak's
/// 3.5 deaf minutes, docs/soak-zephyr.md).
@Suite struct LateCommandAnswerTests {
    static func opcodes(_ wire: WireLog) -> [UInt16] { wire.sent.map { UInt16($0[1]) | UInt16($0[2]) << 8 } }

    @Test func nothingIsSentWhileATimedOutCommandIsStillOwed() throws {
        var flow = HCICommandFlow<256>(timeout: 2_000)
        var wire = WireLog()
        try flow.enqueue(HCILESetScanEnable(enable: false), tag: .gap)
        flow.pump(now: 0, to: &wire)
        try flow.enqueue(HCILESetScanParameters(scanType: .active), tag: .gap)
        let early = flow.expired(now: 1_999)
        #expect(early == nil)
        let expired = flow.expired(now: 2_000)
        #expect(expired?.opcode == HCILESetScanEnable.opcode)
        flow.pump(now: 2_000, to: &wire)
        #expect(Self.opcodes(wire) == [0x200C], "the next command waits for the late answer")
        #expect(flow.deadline == 2_000 + flow.lateAnswerGrace)
        // The late answer (11.6 s after sending, as in the soak) gives the credit back.
        let match = flow.complete(opcode: HCILESetScanEnable.opcode, numPackets: 1)
        #expect(match == .late)
        #expect(flow.owedUntil == nil)
        flow.pump(now: 9_600, to: &wire)
        #expect(Self.opcodes(wire) == [0x200C, 0x200B])
    }

    @Test func anAnswerThatNeverComesReleasesTheQueueAfterTheGrace() throws {
        var flow = HCICommandFlow<256>(timeout: 2_000)
        var wire = WireLog()
        try flow.enqueue(HCILESetScanEnable(enable: false), tag: .gap)
        flow.pump(now: 0, to: &wire)
        try flow.enqueue(HCILESetScanParameters(scanType: .active), tag: .gap)
        _ = flow.expired(now: 2_000)
        let grace = flow.lateAnswerGrace
        let before = flow.expired(now: 2_000 + grace - 1)
        #expect(before == nil)
        flow.pump(now: 2_000 + flow.lateAnswerGrace - 1, to: &wire)
        #expect(Self.opcodes(wire) == [0x200C])
        let after = flow.expired(now: 2_000 + grace)
        #expect(after == nil)
        #expect(flow.deadline == nil)
        flow.pump(now: 2_000 + flow.lateAnswerGrace, to: &wire)
        #expect(Self.opcodes(wire) == [0x200C, 0x200B])
    }

    @Test func anUnansweredLEEncryptReleasesTheQueueAtOnce() throws {
        // Bumble's controller never answers LE Encrypt; the advertiser hashes in software instead.
        var flow = HCICommandFlow<256>(timeout: 2_000)
        var wire = WireLog()
        try flow.enqueue(HCILEEncrypt(key: .init(repeating: 0), plaintext: .init(repeating: 0)), tag: .gap)
        flow.pump(now: 0, to: &wire)
        try flow.enqueue(HCILESetScanParameters(scanType: .active), tag: .gap)
        let encrypt = flow.expired(now: 2_000)
        #expect(encrypt?.opcode == HCILEEncrypt.opcode)
        flow.pump(now: 2_000, to: &wire)
        #expect(Self.opcodes(wire) == [0x2017, 0x200B])
    }

    @Test func anUnansweredVendorCommandReleasesTheQueueAtOnce() throws {
        // Bumble's controller ignores vendor commands it does not know: that is "not supported".
        var flow = HCICommandFlow<256>(timeout: 2_000)
        var wire = WireLog()
        try flow.enqueue(parameterless: HCIOpcode(rawValue: 0xFC01), tag: .gap, timeout: 500)
        flow.pump(now: 0, to: &wire)
        try flow.enqueue(HCILESetScanParameters(scanType: .active), tag: .gap)
        let vendor = flow.expired(now: 500)
        #expect(vendor?.opcode == HCIOpcode(rawValue: 0xFC01))
        flow.pump(now: 500, to: &wire)
        #expect(Self.opcodes(wire) == [0xFC01, 0x200B])
    }

    @Test func theHostSendsTheNextCommandWhenTheGraceEnds() throws {
        var h = BringUpHarness(FakeController())
        h.run()
        #expect(h.host.isReady)
        var out = WireLog()
        try h.host.send(HCILESetScanEnable(enable: false), tag: .application, now: h.now, output: &out)
        try h.host.send(HCILESetScanParameters(scanType: .active), tag: .application, now: h.now, output: &out)
        #expect(Self.opcodes(out) == [0x200C])
        let start = h.now
        h.host.tick(now: start + 2_000, delegate: &h.delegate, output: &out)
        #expect(Self.opcodes(out) == [0x200C], "still owed")
        let end = try #require(h.host.nextDeadline)
        h.host.tick(now: end, delegate: &h.delegate, output: &out)
        #expect(Self.opcodes(out) == [0x200C, 0x200B])
    }
}
