/// A Bluetooth UUID in any of its three wire sizes (Core 5.4 Vol 3 Part B 2.5.1).
///
/// Stored as 16 bytes little-endian (the wire order) plus the size it was given in, so a 16-bit UUID
/// still serialises as 2 bytes. 16- and 32-bit UUIDs are aliases on the Bluetooth Base UUID
/// 00000000-0000-1000-8000-00805F9B34FB; equality compares the full 128-bit value.
public struct BluetoothUUID: Sendable {
    /// 128-bit value, least significant byte first.
    public var bytes: InlineArray<16, UInt8>
    /// 2, 4 or 16: how many bytes it occupies on the wire.
    public var wireSize: Int

    /// Base UUID, little-endian (Core 5.4 Vol 3 Part B 2.5.1).
    static let base: InlineArray<16, UInt8> = [
        0xFB, 0x34, 0x9B, 0x5F, 0x80, 0x00, 0x00, 0x80, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ]

    public init(uuid16: UInt16) {
        bytes = Self.base
        bytes[12] = UInt8(truncatingIfNeeded: uuid16)
        bytes[13] = UInt8(truncatingIfNeeded: uuid16 >> 8)
        wireSize = 2
    }

    public init(uuid32: UInt32) {
        bytes = Self.base
        for i in 0..<4 { bytes[12 + i] = UInt8(truncatingIfNeeded: uuid32 &>> UInt32(8 * i)) }
        wireSize = 4
    }

    /// From 16 bytes in wire order (little-endian).
    public init(littleEndian b: InlineArray<16, UInt8>) {
        bytes = b
        wireSize = 16
    }

    /// From 2, 4 or 16 wire bytes; anything else is a decode error.
    public init(wire: Span<UInt8>) throws(DecodeError) {
        switch wire.count {
        case 2: self.init(uuid16: UInt16(wire[0]) | UInt16(wire[1]) << 8)
        case 4: self.init(uuid32: UInt32(wire[0]) | UInt32(wire[1]) << 8 | UInt32(wire[2]) << 16 | UInt32(wire[3]) << 24)
        case 16:
            var b = InlineArray<16, UInt8>(repeating: 0)
            for i in 0..<16 { b[i] = wire[i] }
            self.init(littleEndian: b)
        default: throw .badLength(field: "UUID", declared: wire.count, limit: 16)
        }
    }

    /// Parses the canonical text form `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (case-insensitive).
    /// Returns nil for anything else. Works on a `StaticString` so the core can hold UUID constants.
    public init?(_ text: StaticString) {
        var b = InlineArray<16, UInt8>(repeating: 0)
        var nibbles = 0
        let p = text.utf8Start
        for i in 0..<text.utf8CodeUnitCount {
            let c = p[i]
            if c == UInt8(ascii: "-") { continue }
            guard let v = Self.hexValue(c), nibbles < 32 else { return nil }
            // Text is big-endian; nibble n belongs to byte 15 - n/2 in little-endian storage.
            let index = 15 - nibbles / 2
            b[index] = nibbles % 2 == 0 ? v << 4 : b[index] | v
            nibbles += 1
        }
        guard nibbles == 32 else { return nil }
        self.init(littleEndian: b)
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// The 16-bit alias, if this UUID is one (whatever size it was given in).
    public var uuid16: UInt16? {
        for i in 0..<12 where bytes[i] != Self.base[i] { return nil }
        guard bytes[14] == 0, bytes[15] == 0 else { return nil }
        return UInt16(bytes[12]) | UInt16(bytes[13]) << 8
    }

    /// The shortest form this UUID can travel in (Core 5.4 Vol 3 Part F 3.2.1 lets ATT use 2 or 16).
    public var shortestWireSize: Int { uuid16 != nil ? 2 : 16 }

    /// Writes the UUID in `size` bytes (2, 4 or 16). A 16-bit UUID can always be written as 16.
    public func write<S: ByteSink>(to sink: inout S, size: Int? = nil) {
        let n = size ?? wireSize
        let start = n == 16 ? 0 : 12
        for i in start..<(start + n) { sink.append(bytes[i]) }
    }
}

extension BluetoothUUID: Equatable, Hashable {
    public static func == (a: BluetoothUUID, b: BluetoothUUID) -> Bool {
        for i in 0..<16 where a.bytes[i] != b.bytes[i] { return false }
        return true
    }
    public func hash(into h: inout Hasher) { for i in 0..<16 { h.combine(bytes[i]) } }
}
