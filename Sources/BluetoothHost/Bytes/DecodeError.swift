/// Why a protocol data unit could not be decoded.
///
/// Every parser in the core is length-checked and reports failures through this one typed error,
/// so a caller can answer a peer precisely (e.g. ATT Invalid PDU) without allocating a message.
/// `StaticString` names the field so the runtime can print a useful sentence.
public enum DecodeError: Error, Sendable {
    /// Fewer bytes than the format requires.
    case truncated(needed: Int, available: Int)
    /// A length field that disagrees with the bytes present, or exceeds a fixed capacity.
    case badLength(field: StaticString, declared: Int, limit: Int)
    /// An opcode, type or code that this decoder does not handle.
    case unexpectedCode(field: StaticString, value: Int)
    /// A field whose value is outside what the specification allows.
    case invalidValue(field: StaticString, value: Int)
    /// Bytes left over after a fixed-size PDU.
    case trailingBytes(count: Int)
}

extension DecodeError: Equatable {
    public static func == (lhs: DecodeError, rhs: DecodeError) -> Bool {
        switch (lhs, rhs) {
        case let (.truncated(a, b), .truncated(c, d)): return a == c && b == d
        case let (.badLength(f, a, b), .badLength(g, c, d)): return f.sameText(as: g) && a == c && b == d
        case let (.unexpectedCode(f, a), .unexpectedCode(g, b)): return f.sameText(as: g) && a == b
        case let (.invalidValue(f, a), .invalidValue(g, b)): return f.sameText(as: g) && a == b
        case let (.trailingBytes(a), .trailingBytes(b)): return a == b
        default: return false
        }
    }
}

extension StaticString {
    /// Compares the text of two static strings without building a `String` (not available in the core).
    func sameText(as other: StaticString) -> Bool {
        guard utf8CodeUnitCount == other.utf8CodeUnitCount else { return false }
        for i in 0..<utf8CodeUnitCount where utf8Start[i] != other.utf8Start[i] { return false }
        return true
    }
}
