// libFuzzer target: Herald signal characteristic writes — reassembly of fragments (SignalReassembler)
// and decoding of whole messages (SignalMessage). Built by Tools/fuzz; host-only code.
// Input: a sequence of fragments, each `[n][n bytes]` (a short tail is the last fragment).
// Invariants: no trap or over-read; the reassembler never holds more than its capacity; a `.complete`
// message parses, is of the kind reported and has exactly its declared length; a rejection clears the
// buffer; every message that parses re-encodes to the same bytes; fragmenting and reassembling a valid
// message gives it back.
import BluetoothHost
import Herald

func check(_ condition: Bool, _ message: StaticString) {
    if !condition { fatalError("invariant: \(message)") }
}

struct Sink: ByteSink {
    var bytes: [UInt8] = []
    mutating func append(_ byte: UInt8) { bytes.append(byte) }
}

func equal(_ a: [UInt8], _ b: Span<UInt8>) -> Bool {
    guard a.count == b.count else { return false }
    for i in 0..<a.count where a[i] != b[i] { return false }
    return true
}

/// Parses `bytes` as one message and checks it re-encodes identically.
func checkRoundTrip(_ bytes: Span<UInt8>) -> SignalMessageKind? {
    guard let m = try? SignalMessage(parsing: bytes) else { return nil }
    let kind = m.kind, rssi = m.rssi, body = m.data
    check(body.count <= bytes.count, "message data within input")
    var sink = Sink()
    do {
        switch kind {
        case .keepAwake: break
        case .payload: try SignalMessageEncoder.writePayload(body, to: &sink)
        case .rssi: SignalMessageEncoder.writeRSSI(rssi, to: &sink)
        case .payloadSharing: try SignalMessageEncoder.writePayloadSharing(rssi: rssi, payloads: body, to: &sink)
        case .immediateSend: try SignalMessageEncoder.writeImmediateSend(body, to: &sink)
        }
    } catch { check(false, "a parsed message re-encodes") }
    check(equal(sink.bytes, bytes), "signal message round trip")
    check(SignalMessage.expectedLength(prefix: bytes) == .complete(bytes.count), "expectedLength of a whole message")
    return kind
}

func fuzzOne(_ input: Span<UInt8>) {
    var r = SignalReassembler<512>()
    var offset = 0
    while offset < input.count {
        let n = Int(input[offset])
        offset += 1
        let end = min(input.count, offset + n)
        let outcome = r.receive(input.extracting(offset..<end))
        offset = end
        check(r.pendingCount <= 512, "reassembler capacity")
        switch outcome {
        case .complete(let kind):
            check(r.pendingCount == 0, "nothing pending after a complete message")
            let message = r.message
            check(message.count <= 512, "message within capacity")
            check(checkRoundTrip(message) == kind, "completed message parses as its kind")
        case .rejected(let error):
            check(error == 0x0D, "rejection is Invalid Attribute Value Length")
            check(r.pendingCount == 0, "rejection clears the buffer")
        case .incomplete:
            check(r.pendingCount > 0, "incomplete holds bytes")
        case .keepAwake:
            break
        }
    }

    // The whole input as one message.
    if checkRoundTrip(input) != nil, input.count > 0 {
        // Fragment it (size from the first byte) and reassemble it.
        let size = max(1, Int(input[0] % 32))
        var fragments = SignalFragmenter(input, fragmentSize: size)
        let expected = fragments.count
        var r2 = SignalReassembler<2048>()
        var seen = 0
        var last = SignalWriteOutcome.incomplete
        while let f = fragments.next() {
            check(f.count >= 1 && f.count <= size, "fragment size")
            seen += 1
            last = r2.receive(f)
            if case .rejected = last { break }
        }
        check(seen == expected, "fragment count")
        if input.count <= 2048 {
            guard case .complete = last else { check(false, "fragments of a valid message reassemble"); return }
            check(sameBytes(&r2, input), "reassembled bytes")
        }
    }
}

/// Compares the reassembled message with `expected` (out of line, as a client module would).
@inline(never)
func sameBytes<let C: Int>(_ r: inout SignalReassembler<C>, _ expected: Span<UInt8>) -> Bool {
    let m = r.message
    guard m.count == expected.count else { return false }
    for i in 0..<m.count where m[i] != expected[i] { return false }
    return true
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let buffer = UnsafeBufferPointer(start: size > 0 ? data : nil, count: size)
    fuzzOne(buffer.span)
    return 0
}
