import BluetoothHost

/// The Herald reference implementation's fixed test payload, protocol 0x08 (herald-for-cpp
/// `ConcreteFixedPayloadDataSupplierV1`, "Fixed testing payload V1"; 0x08–0x0F is the range the
/// reference keeps for custom payloads with country/state codes): protocol byte, country and state
/// codes (16 bits each), a 64-bit client identifier. 13 octets, nothing after. The reference's C++
/// wearable sample serves it (`08 3a03 0000 d202964900000000`: 826, 0, client 1234567890).
///
/// The reference writes every field with `Data::append`, that is in the machine's (little-endian)
/// order, like its codes in the Simple and venue payloads: the same `PayloadCodeByteOrder` decides all
/// three fields, so `--byte-order apps` reads the reference's bytes as the reference meant them.
public struct FixedTestPayload: Equatable, Sendable {
    public static let protocolAndVersion: UInt8 = 0x08
    public static let size = PayloadHeader.size + 8

    public var header: PayloadHeader
    public var clientIdentifier: UInt64

    public init(countryCode: UInt16, stateCode: UInt16, clientIdentifier: UInt64) {
        header = PayloadHeader(protocolAndVersion: Self.protocolAndVersion, countryCode: countryCode, stateCode: stateCode)
        self.clientIdentifier = clientIdentifier
    }

    /// Exactly 13 octets starting with 0x08; anything else is refused (the reference defines no
    /// extended data for it, so trailing octets are not this payload).
    public init(parsing bytes: Span<UInt8>, order: PayloadCodeByteOrder = .bigEndian) throws(DecodeError) {
        var r = try ByteReader(bytes, exactly: Self.size)
        header = try PayloadHeader.read(&r, order: order)
        guard header.protocolAndVersion == Self.protocolAndVersion else {
            throw .unexpectedCode(field: "fixed test payload protocol", value: Int(header.protocolAndVersion))
        }
        if order == .littleEndian {
            clientIdentifier = try r.u64()
        } else {
            let high = try r.u32BigEndian(), low = try r.u32BigEndian()
            clientIdentifier = UInt64(widening: high) &<< 32 | UInt64(widening: low)
        }
    }

    public func write<S: ByteSink>(order: PayloadCodeByteOrder = .bigEndian, to sink: inout S) {
        header.write(to: &sink, order: order)
        if order == .littleEndian {
            sink.append(u64: clientIdentifier)
        } else {
            sink.append(u32BigEndian: UInt32(truncatingIfNeeded: clientIdentifier &>> 32))
            sink.append(u32BigEndian: UInt32(truncatingIfNeeded: clientIdentifier))
        }
    }
}
