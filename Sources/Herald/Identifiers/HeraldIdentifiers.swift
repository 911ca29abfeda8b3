import BluetoothHost

/// The Herald protocol's Bluetooth identifiers (Herald protocol specification; the 16-bit UUID and
/// the 0x05F1 manufacturer ID are the Bluetooth SIG registrations Herald apps use since v2.1).
///
/// UUIDs are built from little-endian byte literals, so they are constants with no parsing and no
/// failure path (the text form is in each comment).
public enum HeraldIdentifiers {
    /// 428132af-4746-42d3-801e-4572d65bfd9b, the specification's service UUID.
    public static let serviceUUID = BluetoothUUID(littleEndian: [
        0x9b, 0xfd, 0x5b, 0xd6, 0x72, 0x45, 0x1e, 0x80, 0xd3, 0x42, 0x46, 0x47, 0xaf, 0x32, 0x81, 0x42,
    ])
    /// 0xFCF6, the registered 16-bit service UUID.
    public static let registeredServiceUUID16: UInt16 = 0xFCF6
    public static let registeredServiceUUID = BluetoothUUID(uuid16: registeredServiceUUID16)

    /// 3e98c0f8-8f05-4829-a121-43e38f8933e7, the payload characteristic (read).
    public static let payloadCharacteristicUUID = BluetoothUUID(littleEndian: [
        0xe7, 0x33, 0x89, 0x8f, 0xe3, 0x43, 0x21, 0xa1, 0x29, 0x48, 0x05, 0x8f, 0xf8, 0xc0, 0x98, 0x3e,
    ])
    /// f617b813-092e-437a-8324-e09a80821a11, the compliant ("Android") signal characteristic:
    /// write with response only.
    public static let androidSignalCharacteristicUUID = BluetoothUUID(littleEndian: [
        0x11, 0x1a, 0x82, 0x80, 0x9a, 0xe0, 0x24, 0x83, 0x7a, 0x43, 0x2e, 0x09, 0x13, 0xb8, 0x17, 0xf6,
    ])
    /// 0eb0d5f2-eae4-4a9a-8af3-a4adb02d4363, the non-compliant ("iOS") signal characteristic:
    /// write and notify.
    public static let iosSignalCharacteristicUUID = BluetoothUUID(littleEndian: [
        0x63, 0x43, 0x2d, 0xb0, 0xad, 0xa4, 0xf3, 0x8a, 0x9a, 0x4a, 0xe4, 0xea, 0xf2, 0xd5, 0xb0, 0x0e,
    ])

    /// Manufacturer ID under which the specification advertises a pseudo device address.
    public static let pseudoDeviceAddressManufacturerID: UInt16 = 0xFFFA
    /// The registered manufacturer ID used for the same purpose.
    public static let registeredManufacturerID: UInt16 = 0x05F1
    /// Apple's company identifier: iPhones in the background advertise only this.
    public static let appleCompanyID: UInt16 = 0x004C

    /// True for either Herald service UUID.
    public static func isHeraldService(_ uuid: BluetoothUUID) -> Bool {
        uuid == serviceUUID || uuid == registeredServiceUUID
    }
}

/// The 6-byte pseudo device address some Herald apps advertise as manufacturer data (0xFFFA or
/// 0x05F1), so scanners can tell devices apart across Bluetooth address rotations. It is a signed
/// 64-bit value written little-endian, of which bytes [2..8) travel (Herald reference apps'
/// `PseudoDeviceAddress`; see the cross-platform vectors).
public struct PseudoDeviceAddress: Equatable, Hashable, Sendable {
    public var data: InlineArray<6, UInt8>

    public static let size = 6

    public init(data: InlineArray<6, UInt8>) { self.data = data }

    public init(value: Int64) {
        let v = UInt64(bitPattern: value)
        var d = InlineArray<6, UInt8>(repeating: 0)
        for i in 0..<6 { d[i] = UInt8(truncatingIfNeeded: v &>> UInt64(widening: UInt(8 * (i + 2)))) }
        data = d
    }

    public init(wire: Span<UInt8>) throws(DecodeError) {
        guard wire.count == Self.size else { throw .badLength(field: "pseudo device address", declared: wire.count, limit: Self.size) }
        var d = InlineArray<6, UInt8>(repeating: 0)
        for i in 0..<6 { d[i] = wire[i] }
        data = d
    }

    /// The 64-bit value the address stands for (its two low bytes never travel, so they read as 0).
    public var value: Int64 {
        var v: UInt64 = 0
        for i in 0..<6 { v |= UInt64(widening: data[i]) &<< UInt64(widening: UInt(8 * (i + 2))) }
        return Int64(bitPattern: v)
    }

    public static func == (a: PseudoDeviceAddress, b: PseudoDeviceAddress) -> Bool {
        for i in 0..<6 where a.data[i] != b.data[i] { return false }
        return true
    }

    public func hash(into h: inout Hasher) { for i in 0..<6 { h.combine(data[i]) } }
}
