import Testing
@testable import BluetoothHost

/// A growable sink for tests (the core never allocates; tests may).
struct ATTTestSink: ATTResponseSink {
    var bytes: [UInt8] = []
    mutating func append(_ byte: UInt8) { bytes.append(byte) }
    var count: Int { bytes.count }
    mutating func withSpan<R>(_ body: (Span<UInt8>) -> R) -> R { body(bytes.span) }
    mutating func truncate(to length: Int) { if length < bytes.count { bytes.removeLast(bytes.count - max(0, length)) } }
}

/// "0a 10 00" → [0x0A, 0x10, 0x00]; spaces ignored.
func attHex(_ text: String) -> [UInt8] {
    let digits = text.filter { !$0.isWhitespace }
    precondition(digits.count % 2 == 0, "odd hex")
    var out: [UInt8] = []
    var i = digits.startIndex
    while i < digits.endIndex {
        let j = digits.index(i, offsetBy: 2)
        out.append(UInt8(digits[i..<j], radix: 16)!)
        i = j
    }
    return out
}

func attEncode<P: ATTPDU & ~Escapable>(_ pdu: borrowing P) -> [UInt8] {
    var sink = ATTTestSink()
    pdu.write(to: &sink)
    return sink.bytes
}

func attArray(_ span: Span<UInt8>) -> [UInt8] {
    var out: [UInt8] = []
    for i in span.indices { out.append(span[i]) }
    return out
}

/// Runs `parse` on `bytes` and returns the DecodeError it threw (nil if it parsed).
func attDecodeError(_ bytes: [UInt8], _ parse: (Span<UInt8>) throws(DecodeError) -> Void) -> DecodeError? {
    do throws(DecodeError) {
        try parse(bytes.span)
        return nil
    } catch { return error }
}
