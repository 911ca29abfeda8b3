/// A cursor over borrowed bytes that never reads past the end.
///
/// All wire integers in Bluetooth are little-endian (Core 5.4 Vol 1 Part E 2.2); big-endian readers
/// exist for the few formats above it (Herald payload codes) that say otherwise.
/// It is `~Escapable`: it cannot outlive the buffer it reads, so parsing never needs a copy.
public struct ByteReader: ~Escapable {
    public let span: Span<UInt8>
    public private(set) var offset: Int = 0

    @_lifetime(copy span)
    public init(_ span: Span<UInt8>) { self.span = span }

    /// A reader over a fixed-size format of exactly `count` octets, checked once here: the optimiser
    /// then sees every later read in bounds and drops their own checks (a fixed PDU's parser is
    /// one comparison instead of one per field). Too few octets are `truncated`, too many
    /// `trailingBytes`, as `expectEnd` would say.
    @_lifetime(copy span)
    public init(_ span: Span<UInt8>, exactly count: Int) throws(DecodeError) {
        guard span.count == count else {
            if span.count < count { throw .truncated(needed: count, available: span.count) }
            throw .trailingBytes(count: span.count &- count)
        }
        self.span = span
    }

    /// A reader over a format whose fixed part is `count` octets, checked once here like
    /// `init(_:exactly:)`, so reading that part needs no checks of its own.
    @_lifetime(copy span)
    public init(_ span: Span<UInt8>, atLeast count: Int) throws(DecodeError) {
        guard span.count >= count else { throw .truncated(needed: count, available: span.count) }
        self.span = span
    }

    /// `offset` never passes `span.count` (every read checks first): unchecked, as in `need`.
    public var remaining: Int { span.count &- offset }
    public var isAtEnd: Bool { offset >= span.count }

    // Every read checks its length here, so the reads below index without a second check; the
    // error is built out of line because this check is inlined into every field of every parser.
    @inline(__always)
    private func need(_ n: Int) throws(DecodeError) {
        guard n >= 0, span.count &- offset >= n else { throw truncation(n) }
    }

    @inline(never)
    private func truncation(_ n: Int) -> DecodeError {
        .truncated(needed: offset &+ n, available: span.count)
    }

    public mutating func u8() throws(DecodeError) -> UInt8 {
        try need(1)
        defer { offset &+= 1 }
        return span[unchecked: offset]
    }

    public mutating func i8() throws(DecodeError) -> Int8 { Int8(bitPattern: try u8()) }

    public mutating func u16() throws(DecodeError) -> UInt16 {
        try need(2)
        defer { offset &+= 2 }
        return UInt16(span[unchecked: offset]) | UInt16(span[unchecked: offset &+ 1]) << 8
    }

    public mutating func i16() throws(DecodeError) -> Int16 { Int16(bitPattern: try u16()) }

    public mutating func u16BigEndian() throws(DecodeError) -> UInt16 {
        try need(2)
        defer { offset &+= 2 }
        return UInt16(span[unchecked: offset]) << 8 | UInt16(span[unchecked: offset &+ 1])
    }

    public mutating func u24() throws(DecodeError) -> UInt32 {
        try need(3)
        defer { offset &+= 3 }
        return UInt32(span[unchecked: offset]) | UInt32(span[unchecked: offset &+ 1]) << 8
            | UInt32(span[unchecked: offset &+ 2]) << 16
    }

    public mutating func u32() throws(DecodeError) -> UInt32 {
        try need(4)
        defer { offset &+= 4 }
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(span[unchecked: offset &+ i]) &<< UInt32(8 * i) }
        return v
    }

    public mutating func u32BigEndian() throws(DecodeError) -> UInt32 {
        try need(4)
        defer { offset &+= 4 }
        var v: UInt32 = 0
        for i in 0..<4 { v = v &<< 8 | UInt32(span[unchecked: offset &+ i]) }
        return v
    }

    public mutating func u64() throws(DecodeError) -> UInt64 {
        try need(8)
        defer { offset &+= 8 }
        // Most significant octet first with a constant shift: on a 32-bit core a shift of a 64-bit
        // value by a variable amount is a runtime-library call.
        var v: UInt64 = 0
        for i in (0..<8).reversed() { v = v &<< 8 | UInt64(widening: span[unchecked: offset &+ i]) }
        return v
    }

    /// The next `count` bytes, borrowed from the same buffer.
    @_lifetime(copy self)
    public mutating func bytes(_ count: Int) throws(DecodeError) -> Span<UInt8> {
        try need(count)
        defer { offset &+= count }
        // 0 <= count <= span.count - offset (`need`): the range's bounds are in order, and `..<`'s
        // own check of that (a trap at each inlined call) is not needed.
        return span.extracting(unchecked: Range(uncheckedBounds: (offset, offset &+ count)))
    }

    /// Everything not read yet.
    @_lifetime(copy self)
    public mutating func rest() -> Span<UInt8> {
        defer { offset = span.count }
        return span.extracting(unchecked: offset..<span.count)
    }

    public mutating func skip(_ count: Int) throws(DecodeError) {
        try need(count)
        offset &+= count
    }

    /// Fixed-size PDUs must not carry extra bytes (a peer that sends them gets Invalid PDU).
    public func expectEnd() throws(DecodeError) {
        if remaining != 0 { throw .trailingBytes(count: remaining) }
    }
}
