import BluetoothHost

/// Extended data section codes (Herald payload extended data specification; beacon payload
/// specification for 0x14–0x16 and 0x20/0x21). 0x40–0x42 are this project's additions in the range
/// the specification reserves for Herald use; 0x80–0xFF are custom (country / application).
public enum ExtendedDataCode {
    public static let premisesName: UInt8 = 0x10
    public static let locationName: UInt8 = 0x11
    public static let areaDisambiguation: UInt8 = 0x12
    public static let locationURL: UInt8 = 0x13
    public static let fullAddress: UInt8 = 0x14
    public static let entrySource: UInt8 = 0x15
    public static let entrySourceVersion: UInt8 = 0x16
    public static let contactEventStart: UInt8 = 0x20
    public static let contactEventEnd: UInt8 = 0x21
    public static let yourLastRSSI: UInt8 = 0x40
    public static let txPower: UInt8 = 0x41
    public static let phoneModel: UInt8 = 0x42
    public static let firstCustom: UInt8 = 0x80
}

/// One `code, length, data` section, borrowed from the payload.
public struct ExtendedDataSection: ~Escapable {
    public let code: UInt8
    public let data: Span<UInt8>

    @_lifetime(copy data)
    public init(code: UInt8, data: Span<UInt8>) { self.code = code; self.data = data }

    /// 0x20/0x21: seconds since 1970 as uint32, big-endian like every extended data value.
    public var unixSeconds: UInt32? {
        guard code == ExtendedDataCode.contactEventStart || code == ExtendedDataCode.contactEventEnd,
              data.count == 4 else { return nil }
        return UInt32(data[0]) &<< 24 | UInt32(data[1]) &<< 16 | UInt32(data[2]) &<< 8 | UInt32(data[3])
    }

    /// 0x40 (the RSSI at which the sender last heard us) or 0x41 (its Tx power), signed dBm.
    public var dBm: Int8? {
        guard code == ExtendedDataCode.yourLastRSSI || code == ExtendedDataCode.txPower, data.count == 1 else { return nil }
        return Int8(bitPattern: data[0])
    }

    /// True for the sections whose data is UTF-8 text (names, URL, address, phone model).
    public var isText: Bool { ExtendedDataReader.isTextCode(code) }
}

/// Iterates and validates extended data: a sequence of `code (1) | length (1) | data (length)`.
public struct ExtendedDataReader: ~Escapable {
    var reader: ByteReader

    @_lifetime(copy bytes)
    public init(_ bytes: Span<UInt8>) { reader = ByteReader(bytes) }

    /// The next valid section, nil at the end; a malformed one throws.
    @_lifetime(copy self)
    public mutating func next() throws(DecodeError) -> ExtendedDataSection? {
        if reader.isAtEnd { return nil }
        let code = try reader.u8()
        let length = Int(try reader.u8())
        guard length <= reader.remaining else {
            throw .badLength(field: "extended data section", declared: length, limit: reader.remaining)
        }
        let data = try reader.bytes(length)
        try Self.validate(code: code, data: data)
        return ExtendedDataSection(code: code, data: data)
    }

    /// Checks every section of `bytes`.
    public static func validate(_ bytes: Span<UInt8>) throws(DecodeError) {
        var r = ExtendedDataReader(bytes)
        while try r.next() != nil {}
    }

    static func isTextCode(_ code: UInt8) -> Bool {
        switch code {
        case 0x05, 0x10...0x16, ExtendedDataCode.phoneModel: return true
        default: return false
        }
    }

    /// Per-code rules: no empty sections (the specification omits items with no value), fixed sizes
    /// where the format has one, well-formed UTF-8 for text, https for the location URL.
    public static func validate(code: UInt8, data: Span<UInt8>) throws(DecodeError) {
        guard data.count > 0 else { throw .badLength(field: "extended data section", declared: 0, limit: 255) }
        switch code {
        case ExtendedDataCode.contactEventStart, ExtendedDataCode.contactEventEnd:
            guard data.count == 4 else { throw .badLength(field: "contact event time", declared: data.count, limit: 4) }
        case ExtendedDataCode.yourLastRSSI, ExtendedDataCode.txPower:
            guard data.count == 1 else { throw .badLength(field: "extended data dBm", declared: data.count, limit: 1) }
        case ExtendedDataCode.locationURL:
            try validateUTF8(data)
            let prefix: StaticString = "https://"
            guard data.count > prefix.utf8CodeUnitCount else {
                throw .invalidValue(field: "location URL scheme", value: Int(code))
            }
            for i in 0..<prefix.utf8CodeUnitCount where data[i] != prefix.utf8Start[i] {
                throw .invalidValue(field: "location URL scheme", value: Int(code))
            }
        default:
            if isTextCode(code) { try validateUTF8(data) }
        }
    }

    /// Structural UTF-8 check (RFC 3629): lead/continuation bytes, no overlongs, no surrogates,
    /// nothing above U+10FFFF.
    public static func validateUTF8(_ s: Span<UInt8>) throws(DecodeError) {
        var i = 0
        while i < s.count {
            let b = s[i]
            var need = 0
            var min: UInt32 = 0
            var cp: UInt32 = 0
            switch b {
            case 0x00...0x7F: i += 1; continue
            case 0xC2...0xDF: need = 1; min = 0x80; cp = UInt32(b & 0x1F)
            case 0xE0...0xEF: need = 2; min = 0x800; cp = UInt32(b & 0x0F)
            case 0xF0...0xF4: need = 3; min = 0x10000; cp = UInt32(b & 0x07)
            default: throw .invalidValue(field: "UTF-8 text", value: i)
            }
            guard i + need < s.count else { throw .invalidValue(field: "UTF-8 text", value: i) }
            for j in 1...need {
                let c = s[i + j]
                guard c & 0xC0 == 0x80 else { throw .invalidValue(field: "UTF-8 text", value: i + j) }
                cp = cp &<< 6 | UInt32(c & 0x3F)
            }
            guard cp >= min, cp <= 0x10FFFF, !(0xD800...0xDFFF).contains(cp) else {
                throw .invalidValue(field: "UTF-8 text", value: i)
            }
            i += need + 1
        }
    }
}

/// Appends validated sections to any sink (used to build the extended data of a payload).
public enum ExtendedDataWriter {
    public static func append<S: ByteSink>(code: UInt8, data: Span<UInt8>, to sink: inout S) throws(DecodeError) {
        guard data.count <= 255 else { throw .badLength(field: "extended data section", declared: data.count, limit: 255) }
        try ExtendedDataReader.validate(code: code, data: data)
        sink.append(code)
        sink.append(UInt8(truncatingIfNeeded: data.count))
        sink.append(contentsOf: data)
    }

    public static func append<S: ByteSink>(code: UInt8, text: StaticString, to sink: inout S) throws(DecodeError) {
        // A StaticString's UTF-8 lies in the binary's constant data for the whole run: the span
        // cannot outlive it (and Embedded Swift has no String to take it from).
        let span = Span(_unsafeStart: text.utf8Start, count: text.utf8CodeUnitCount)
        try append(code: code, data: span, to: &sink)
    }

    public static func appendContactEvent<S: ByteSink>(start: Bool, unixSeconds: UInt32, to sink: inout S) {
        sink.append(start ? ExtendedDataCode.contactEventStart : ExtendedDataCode.contactEventEnd)
        sink.append(4)
        sink.append(u32BigEndian: unixSeconds)
    }

    public static func appendDBm<S: ByteSink>(code: UInt8, dBm: Int8, to sink: inout S) {
        sink.append(code)
        sink.append(1)
        sink.append(i8: dBm)
    }
}
