/// Advertising and scan response data as a sequence of AD structures
/// (Core 5.4 Vol 3 Part C 11; data types in the Core Specification Supplement Part A).
///
/// Each structure is `[length][type][length - 1 data octets]`. A zero length octet ends the
/// significant part (what follows is padding); a length running past the end is an error.

/// AD type codes from the Assigned Numbers "Common Data Types" table (Core Supplement Part A 1).
public enum ADType {
    public static let flags: UInt8 = 0x01
    public static let incompleteServiceUUIDs16: UInt8 = 0x02
    public static let completeServiceUUIDs16: UInt8 = 0x03
    public static let incompleteServiceUUIDs32: UInt8 = 0x04
    public static let completeServiceUUIDs32: UInt8 = 0x05
    public static let incompleteServiceUUIDs128: UInt8 = 0x06
    public static let completeServiceUUIDs128: UInt8 = 0x07
    public static let shortenedLocalName: UInt8 = 0x08
    public static let completeLocalName: UInt8 = 0x09
    public static let txPowerLevel: UInt8 = 0x0A
    public static let serviceData16: UInt8 = 0x16
    public static let serviceData32: UInt8 = 0x20
    public static let serviceData128: UInt8 = 0x21
    public static let manufacturerSpecificData: UInt8 = 0xFF
}

/// Bits of the Flags AD type (Core Supplement Part A 1.3).
public enum ADFlags {
    public static let leLimitedDiscoverable: UInt8 = 0x01
    public static let leGeneralDiscoverable: UInt8 = 0x02
    public static let brEDRNotSupported: UInt8 = 0x04
    /// LE General Discoverable, no BR/EDR: what a BLE-only peripheral advertises.
    public static let generalDiscoverableLEOnly: UInt8 = 0x06
}

/// One AD structure, borrowed from the advertising data.
public struct ADStructure: ~Escapable {
    public let type: UInt8
    public let data: Span<UInt8>

    @_lifetime(copy data)
    public init(type: UInt8, data: Span<UInt8>) {
        self.type = type
        self.data = data
    }
}

/// Iterates the AD structures of advertising or scan response data without copying.
///
///     var parser = AdvertisingDataParser(report.data)
///     while let s = try parser.next() { ... }
public struct AdvertisingDataParser: ~Escapable {
    var reader: ByteReader
    var finished = false

    @_lifetime(copy data)
    public init(_ data: Span<UInt8>) { reader = ByteReader(data) }

    /// The next structure; nil at the end of the data or at a zero length octet.
    @_lifetime(copy self)
    public mutating func next() throws(DecodeError) -> ADStructure? {
        guard !finished, !reader.isAtEnd else { return nil }
        let length = Int(try reader.u8())
        if length == 0 {
            // Core 5.4 Vol 3 Part C 11: the rest is the non-significant part.
            finished = true
            return nil
        }
        guard length <= reader.remaining else {
            finished = true
            throw .badLength(field: "AD structure length", declared: length, limit: reader.remaining)
        }
        let type = try reader.u8()
        let data = try reader.bytes(length - 1)
        return ADStructure(type: type, data: data)
    }

    /// True if `uuid` appears in any service UUID list (16, 32 or 128-bit, complete or not).
    /// Scans the raw data, so it has no capacity limit; malformed data counts as "not found".
    public static func containsServiceUUID(_ uuid: BluetoothUUID, in data: Span<UInt8>) -> Bool {
        var parser = AdvertisingDataParser(data)
        while true {
            let found: Bool
            do {
                guard let s = try parser.next() else { return false }
                found = uuidList(s, contains: uuid)
            } catch {
                return false
            }
            if found { return true }
        }
    }

    /// The UUID width an AD type lists, or nil if it is not a service UUID list.
    public static func uuidListWidth(ofType type: UInt8) -> Int? {
        switch type {
        case ADType.incompleteServiceUUIDs16, ADType.completeServiceUUIDs16: return 2
        case ADType.incompleteServiceUUIDs32, ADType.completeServiceUUIDs32: return 4
        case ADType.incompleteServiceUUIDs128, ADType.completeServiceUUIDs128: return 16
        default: return nil
        }
    }

    static func uuidList(_ s: borrowing ADStructure, contains uuid: BluetoothUUID) -> Bool {
        guard let width = uuidListWidth(ofType: s.type) else { return false }
        var offset = 0
        while offset + width <= s.data.count {
            if let candidate = try? BluetoothUUID(wire: s.data.extracting(offset..<(offset + width))),
                candidate == uuid
            {
                return true
            }
            offset += width
        }
        return false
    }
}
