/// Where encoders write bytes: a fixed buffer in the core, anything in tests or the runtime.
///
/// Encoders are generic over the sink instead of returning arrays, so serialising a PDU
/// allocates nothing and the same code writes straight into an H4/ACL frame.
public protocol ByteSink {
    mutating func append(_ byte: UInt8)
    /// Appends every byte of `bytes`. A requirement (with a byte-by-byte default) so that sinks with
    /// contiguous storage copy a whole value or packet body at once, even from generic code.
    mutating func append(contentsOf bytes: Span<UInt8>)
    /// Appends `v` least significant octet first. A requirement (with a byte-by-byte default) so
    /// that a fixed buffer checks its room once per field, not once per octet.
    mutating func append(u16 v: UInt16)
}

extension ByteSink {
    @inline(__always) public mutating func append(u8 v: UInt8) { append(v) }
    @inline(__always) public mutating func append(i8 v: Int8) { append(UInt8(bitPattern: v)) }

    public mutating func append(u16 v: UInt16) {
        append(UInt8(truncatingIfNeeded: v))
        append(UInt8(truncatingIfNeeded: v >> 8))
    }

    public mutating func append(i16 v: Int16) { append(u16: UInt16(bitPattern: v)) }

    public mutating func append(u16BigEndian v: UInt16) {
        append(UInt8(truncatingIfNeeded: v >> 8))
        append(UInt8(truncatingIfNeeded: v))
    }

    public mutating func append(u24 v: UInt32) {
        for i in 0..<3 { append(UInt8(truncatingIfNeeded: v &>> UInt32(8 * i))) }
    }

    public mutating func append(u32 v: UInt32) {
        for i in 0..<4 { append(UInt8(truncatingIfNeeded: v &>> UInt32(8 * i))) }
    }

    public mutating func append(u32BigEndian v: UInt32) {
        for i in (0..<4).reversed() { append(UInt8(truncatingIfNeeded: v &>> UInt32(8 * i))) }
    }

    public mutating func append(u64 v: UInt64) {
        // Shifted a constant 8 bits at a time: on a 32-bit core a 64-bit shift by a variable amount
        // is a runtime-library call.
        var rest = v
        for _ in 0..<8 {
            append(UInt8(truncatingIfNeeded: rest))
            rest = rest &>> 8
        }
    }

    public mutating func append(contentsOf bytes: Span<UInt8>) {
        for i in bytes.indices { append(bytes[i]) }
    }
}

/// Counts bytes without storing them: encoders use it to learn a PDU's length before writing it.
public struct ByteCounter: ByteSink {
    public private(set) var count = 0
    public init() {}
    @inline(__always) public mutating func append(_ byte: UInt8) { count += 1 }
}
