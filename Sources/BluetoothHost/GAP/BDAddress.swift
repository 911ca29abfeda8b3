/// A 48-bit Bluetooth device address, stored in wire order (least significant byte first),
/// as HCI carries it (Core 5.4 Vol 4 Part E 5.2).
public struct BDAddress: Equatable, Hashable, Sendable {
    public var bytes: InlineArray<6, UInt8>

    public init(bytes: InlineArray<6, UInt8>) { self.bytes = bytes }

    /// From the usual display order `AA:BB:CC:DD:EE:FF` (most significant first).
    public init(displayOrder b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8, _ b4: UInt8, _ b5: UInt8) {
        bytes = [b5, b4, b3, b2, b1, b0]
    }

    public static let zero = BDAddress(bytes: InlineArray(repeating: 0))

    public var isZero: Bool {
        for i in 0..<6 where bytes[i] != 0 { return false }
        return true
    }

    /// The two most significant bits, which classify a random address (Core 5.4 Vol 6 Part B 1.3.2).
    public var randomSubtype: RandomAddressSubtype {
        switch bytes[5] >> 6 {
        case 0b11: return .staticAddress
        case 0b01: return .resolvablePrivate
        case 0b00: return .nonResolvablePrivate
        default: return .reserved
        }
    }

    /// Out of line: the wearable compares addresses in a dozen places (device database, scan
    /// answers, links, the central's holds), and each inlined copy of the six comparisons was 70-90 B
    /// (wearable -448 B).
    @inline(never)
    public static func == (a: BDAddress, b: BDAddress) -> Bool {
        for i in 0..<6 where a.bytes[i] != b.bytes[i] { return false }
        return true
    }

    public func hash(into h: inout Hasher) { for i in 0..<6 { h.combine(bytes[i]) } }

    public static func read(_ r: inout ByteReader) throws(DecodeError) -> BDAddress {
        var a = BDAddress.zero
        for i in 0..<6 { a.bytes[i] = try r.u8() }
        return a
    }

    public func write<S: ByteSink>(to sink: inout S) { for i in 0..<6 { sink.append(bytes[i]) } }

    /// Writes `AA:BB:CC:DD:EE:FF` (17 ASCII bytes) without building a String.
    public func writeDisplay<S: ByteSink>(to sink: inout S) {
        let hex: StaticString = "0123456789ABCDEF"
        for i in (0..<6).reversed() {
            sink.append(hex.utf8Start[Int(bytes[i] >> 4)])
            sink.append(hex.utf8Start[Int(bytes[i] & 0xF)])
            if i > 0 { sink.append(UInt8(ascii: ":")) }
        }
    }
}

public enum RandomAddressSubtype: Sendable, Equatable {
    case staticAddress, resolvablePrivate, nonResolvablePrivate, reserved
}

/// Address types as HCI LE commands and events carry them (Core 5.4 Vol 4 Part E 7.7.65).
public enum AddressType: UInt8, Sendable, Equatable {
    case publicDevice = 0x00
    case randomDevice = 0x01
    case publicIdentity = 0x02
    case randomIdentity = 0x03
    /// Extended Advertising Report: anonymous advertiser.
    case anonymous = 0xFF
}

/// An address together with its type: what identifies a peer on the air.
public struct DeviceAddress: Equatable, Hashable, Sendable {
    public var type: AddressType
    public var address: BDAddress
    public init(type: AddressType, address: BDAddress) { self.type = type; self.address = address }
}
