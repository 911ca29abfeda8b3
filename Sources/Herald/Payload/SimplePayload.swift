import BluetoothHost

/// Byte order of the country and state codes. The Simple payload specification says big-endian
/// (network order); the reference apps' `Data.append(UInt16)` writes little-endian. Big-endian is the
/// default; the option exists to talk to those apps.
public enum PayloadCodeByteOrder: Sendable, Equatable {
    case bigEndian, littleEndian
}

/// The fixed header shared by the Simple payload (0x10–0x17) and the venue beacon payload (0x30–0x37):
/// protocol/version byte, then ISO 3166-1 numeric country code and a state code, 16 bits each.
public struct PayloadHeader: Equatable, Sendable {
    public var protocolAndVersion: UInt8
    public var countryCode: UInt16
    public var stateCode: UInt16

    public init(protocolAndVersion: UInt8, countryCode: UInt16, stateCode: UInt16) {
        self.protocolAndVersion = protocolAndVersion
        self.countryCode = countryCode
        self.stateCode = stateCode
    }

    public static let size = 5

    static func read(_ r: inout ByteReader, order: PayloadCodeByteOrder) throws(DecodeError) -> PayloadHeader {
        let v = try r.u8()
        let country = order == .bigEndian ? try r.u16BigEndian() : try r.u16()
        let state = order == .bigEndian ? try r.u16BigEndian() : try r.u16()
        return PayloadHeader(protocolAndVersion: v, countryCode: country, stateCode: state)
    }

    func write<S: ByteSink>(to sink: inout S, order: PayloadCodeByteOrder) {
        sink.append(protocolAndVersion)
        if order == .bigEndian {
            sink.append(u16BigEndian: countryCode)
            sink.append(u16BigEndian: stateCode)
        } else {
            sink.append(u16: countryCode)
            sink.append(u16: stateCode)
        }
    }
}

/// A Simple payload (Herald Simple payload specification): header, 16-byte contact identifier,
/// 0–489 bytes of extended data. A borrowed view: the extended data is not copied.
public struct SimplePayload: ~Escapable {
    public static let protocolRange: ClosedRange<UInt8> = 0x10...0x17
    /// Header + identifier, the size without extended data (and the unit of payload sharing).
    public static let minimumSize = PayloadHeader.size + 16
    public static let maximumExtendedDataSize = 489

    public var header: PayloadHeader
    public var contactIdentifier: ContactIdentifier
    /// Raw extended data; iterate it with `ExtendedDataReader`.
    public var extendedData: Span<UInt8>

    @_lifetime(copy bytes)
    public init(parsing bytes: Span<UInt8>, order: PayloadCodeByteOrder = .bigEndian) throws(DecodeError) {
        var r = ByteReader(bytes)
        header = try PayloadHeader.read(&r, order: order)
        guard Self.protocolRange.contains(header.protocolAndVersion) else {
            throw .unexpectedCode(field: "Simple payload protocol/version", value: Int(header.protocolAndVersion))
        }
        var id = ContactIdentifier(repeating: 0)
        let idBytes = try r.bytes(16)
        for i in 0..<16 { id[i] = idBytes[i] }
        contactIdentifier = id
        let rest = r.rest()
        guard rest.count <= Self.maximumExtendedDataSize else {
            throw .badLength(field: "Simple payload extended data", declared: rest.count, limit: Self.maximumExtendedDataSize)
        }
        try ExtendedDataReader.validate(rest)
        extendedData = rest
    }

    /// Writes a Simple payload. `extendedData` must already be valid sections (see
    /// `ExtendedDataWriter`); it is checked, and a failure writes nothing.
    public static func write<S: ByteSink>(header: PayloadHeader, contactIdentifier: borrowing ContactIdentifier,
                                          extendedData: Span<UInt8>, order: PayloadCodeByteOrder = .bigEndian,
                                          to sink: inout S) throws(DecodeError) {
        guard protocolRange.contains(header.protocolAndVersion) else {
            throw .unexpectedCode(field: "Simple payload protocol/version", value: Int(header.protocolAndVersion))
        }
        guard extendedData.count <= maximumExtendedDataSize else {
            throw .badLength(field: "Simple payload extended data", declared: extendedData.count, limit: maximumExtendedDataSize)
        }
        try ExtendedDataReader.validate(extendedData)
        header.write(to: &sink, order: order)
        for i in 0..<16 { sink.append(contactIdentifier[i]) }
        sink.append(contentsOf: extendedData)
    }
}

/// The venue beacon payload (Herald beacon payload specification): protocol 0x30–0x37, country,
/// state, a 32-bit location code, then extended data (premises name, area, URL …).
public struct VenueBeaconPayload: ~Escapable {
    public static let protocolRange: ClosedRange<UInt8> = 0x30...0x37
    public static let minimumSize = PayloadHeader.size + 4
    public static let maximumExtendedDataSize = 501

    public var header: PayloadHeader
    public var locationCode: UInt32
    public var extendedData: Span<UInt8>

    @_lifetime(copy bytes)
    public init(parsing bytes: Span<UInt8>, order: PayloadCodeByteOrder = .bigEndian) throws(DecodeError) {
        var r = ByteReader(bytes)
        header = try PayloadHeader.read(&r, order: order)
        guard Self.protocolRange.contains(header.protocolAndVersion) else {
            throw .unexpectedCode(field: "beacon payload protocol/version", value: Int(header.protocolAndVersion))
        }
        locationCode = order == .bigEndian ? try r.u32BigEndian() : try r.u32()
        let rest = r.rest()
        guard rest.count <= Self.maximumExtendedDataSize else {
            throw .badLength(field: "beacon payload extended data", declared: rest.count, limit: Self.maximumExtendedDataSize)
        }
        try ExtendedDataReader.validate(rest)
        extendedData = rest
    }

    public static func write<S: ByteSink>(header: PayloadHeader, locationCode: UInt32, extendedData: Span<UInt8>,
                                          order: PayloadCodeByteOrder = .bigEndian, to sink: inout S) throws(DecodeError) {
        guard protocolRange.contains(header.protocolAndVersion) else {
            throw .unexpectedCode(field: "beacon payload protocol/version", value: Int(header.protocolAndVersion))
        }
        guard extendedData.count <= maximumExtendedDataSize else {
            throw .badLength(field: "beacon payload extended data", declared: extendedData.count, limit: maximumExtendedDataSize)
        }
        try ExtendedDataReader.validate(extendedData)
        header.write(to: &sink, order: order)
        if order == .bigEndian { sink.append(u32BigEndian: locationCode) } else { sink.append(u32: locationCode) }
        sink.append(contentsOf: extendedData)
    }
}

/// Splits the concatenated payloads of a payload-sharing message (signal message 0x03) into single
/// payloads. Shared payloads carry no length prefix, so — as the reference apps do — the list is cut
/// into fixed 21-byte Simple payloads; a tail shorter than that is an error, not a payload.
public struct SharedPayloadIterator: ~Escapable {
    public let bytes: Span<UInt8>
    public let payloadSize: Int
    public private(set) var offset = 0

    @_lifetime(copy bytes)
    public init(_ bytes: Span<UInt8>, payloadSize: Int = SimplePayload.minimumSize) {
        self.bytes = bytes
        self.payloadSize = max(1, payloadSize)
    }

    /// The whole list must be a multiple of the payload size.
    public func validate() throws(DecodeError) {
        if bytes.count % payloadSize != 0 {
            throw .badLength(field: "shared payloads", declared: bytes.count, limit: bytes.count - bytes.count % payloadSize)
        }
    }

    public var count: Int { bytes.count / payloadSize }

    /// The next payload, nil at the end; throws on a trailing partial payload.
    @_lifetime(copy self)
    public mutating func next() throws(DecodeError) -> Span<UInt8>? {
        let left = bytes.count - offset
        if left == 0 { return nil }
        guard left >= payloadSize else { throw .truncated(needed: offset + payloadSize, available: bytes.count) }
        defer { offset += payloadSize }
        return bytes.extracting(offset..<(offset + payloadSize))
    }
}
