import Testing
import BluetoothHost
@testable import Herald

/// Inputs the `Signal` fuzz target (Fuzz/Signal.swift) flagged, kept as regression tests (the input
/// is also in Fuzz/Corpus/Signal/regression-message-span, so every fuzz run replays it).
///
/// Finding (Tools/fuzz Signal, first seconds): the payload message `01 0100 3d` fed one byte at a time
/// reported `.complete(.payload)` but `SignalReassembler.message` read back other bytes. The
/// reassembler's logic was right; Swift 6.3.1 -O was not: the inlined `borrowing get` copied the
/// reassembler's `FixedBytes` into a stack temporary, took the span from the copy and deallocated the
/// temporary before the span was read (SIL: `load; alloc_stack $FixedBytes<N>; store;
/// address_to_pointer …; dealloc_stack`, then the span is used). Fixed in the core by main's 33db5af
/// (`@_addressableSelf` on the inline-buffer span accessors, found independently on armv7em); the
/// fuzz target, built -O, checks it. These tests run unoptimised, so here they pin the contract.
@Suite struct FuzzRegressionSignalTests {
    func feed<let C: Int>(_ r: inout SignalReassembler<C>, _ b: [UInt8]) -> SignalWriteOutcome {
        b.withUnsafeBufferPointer { r.receive(Span(_unsafeElements: $0)) }
    }

    func message<let C: Int>(_ r: inout SignalReassembler<C>) -> [UInt8] {
        let s = r.message
        var out: [UInt8] = []
        for i in s.indices { out.append(s[i]) }
        return out
    }

    @Test func oneByteFragmentsReassembleTheExactBytes() {
        let input = hex("0101003d")
        var r = SignalReassembler<2048>()
        var outcomes: [SignalWriteOutcome] = []
        for b in input { outcomes.append(feed(&r, [b])) }
        #expect(outcomes == [.incomplete, .incomplete, .incomplete, .complete(.payload)])
        #expect(r.pendingCount == 0)
        #expect(message(&r) == input)
    }

    @Test(arguments: [1, 2, 3, 20])
    func everyFragmentSizeGivesBackTheMessage(size: Int) {
        // Payload sharing: RSSI -42, one 21-byte payload.
        let input = hex("03d6ff1500") + hex("10033a0003") + [UInt8](repeating: 0x11, count: 16)
        var r = SignalReassembler<64>()
        var last = SignalWriteOutcome.incomplete
        var i = 0
        while i < input.count {
            last = feed(&r, Array(input[i..<min(input.count, i + size)]))
            i += size
        }
        #expect(last == .complete(.payloadSharing))
        #expect(message(&r) == input)
    }
}
