import Foundation
import Herald

extension PayloadCodeByteOrder {
    /// The `--byte-order` word: `spec` (the Simple payload specification, big-endian) or `apps` (the
    /// reference apps, which write the codes little-endian).
    public var optionName: String { self == .bigEndian ? "spec" : "apps" }

    public init?(optionName: String) {
        switch optionName {
        case "spec": self = .bigEndian
        case "apps": self = .littleEndian
        default: return nil
        }
    }

    public var explanation: String {
        self == .bigEndian ? "country/state/location big-endian, as the Simple payload specification says"
            : "country/state/location little-endian, as the Herald reference apps write them"
    }
}

/// A Herald payload's header fields as decoded with one byte order, so whoever reads them knows which.
public struct DecodedPayloadFields: Encodable, Equatable {
    /// `simple` (0x10–0x17), `venue` (0x30–0x37) or `test` (0x08, the reference's fixed test payload).
    public var type: String
    public var protocolAndVersion: Int
    public var country: Int
    public var state: Int
    /// Venue beacon payloads only.
    public var locationCode: UInt32?
    /// Fixed test payloads (0x08) only: herald-for-cpp's 64-bit client identifier.
    public var clientIdentifier: UInt64?
    /// Venue beacon payloads only: the premises name (extended data 0x10), when there is one.
    public var premisesName: String?
    /// `spec` or `apps` (see `PayloadCodeByteOrder.optionName`).
    public var byteOrder: String

    /// nil when the bytes are none of the three payloads. The fixed part is parsed by the core; extended
    /// data that does not parse does not hide the codes (as before this decoder used the core), it only
    /// leaves out the premises name.
    public static func decode(_ bytes: [UInt8], order: PayloadCodeByteOrder) -> DecodedPayloadFields? {
        let span = bytes.span
        if span.count >= SimplePayload.minimumSize,
           let p = try? SimplePayload(parsing: span.extracting(0..<SimplePayload.minimumSize), order: order) {
            return DecodedPayloadFields(type: "simple", protocolAndVersion: Int(p.header.protocolAndVersion),
                                        country: Int(p.header.countryCode), state: Int(p.header.stateCode),
                                        byteOrder: order.optionName)
        }
        if span.count >= VenueBeaconPayload.minimumSize,
           let v = try? VenueBeaconPayload(parsing: span.extracting(0..<VenueBeaconPayload.minimumSize), order: order) {
            var name: String?
            if let whole = try? VenueBeaconPayload(parsing: span, order: order) { name = PayloadDescription.premisesName(whole.extendedData) }
            return DecodedPayloadFields(type: "venue", protocolAndVersion: Int(v.header.protocolAndVersion),
                                        country: Int(v.header.countryCode), state: Int(v.header.stateCode),
                                        locationCode: v.locationCode, premisesName: name, byteOrder: order.optionName)
        }
        if let t = try? FixedTestPayload(parsing: span, order: order) {
            return DecodedPayloadFields(type: "test", protocolAndVersion: Int(t.header.protocolAndVersion),
                                        country: Int(t.header.countryCode), state: Int(t.header.stateCode),
                                        clientIdentifier: t.clientIdentifier, byteOrder: order.optionName)
        }
        return nil
    }

    /// `826/4` or `826/4/123456` (country/state[/location]).
    public var codes: String {
        "\(country)/\(state)" + (locationCode.map { "/\($0)" } ?? "")
    }
}

/// A payload decoded for people, with the byte order the user chose (`--byte-order`):
/// `Simple 826/0 AbCdEf` (country/state, the contact identifier's short name), `venue 826/0 location
/// 12345 "Café Nord"` (premises name from the extended data), `test 826/0 client 1234567890` (the
/// reference's fixed test payload, 0x08). Anything else is shown by its short name.
public enum PayloadDescription {
    public static func text(_ bytes: [UInt8], order: PayloadCodeByteOrder) -> String {
        if bytes.isEmpty { return "-" }
        guard let f = DecodedPayloadFields.decode(bytes, order: order) else { return payloadShortName(bytes) }
        switch f.type {
        case "simple":
            return "Simple \(f.country)/\(f.state) \(payloadShortName(bytes))"
        case "venue":
            var text = "venue \(f.country)/\(f.state) location \(f.locationCode ?? 0)"
            if let name = f.premisesName { text += " \"\(name)\"" }
            return text
        default:
            return "test \(f.country)/\(f.state) client \(f.clientIdentifier ?? 0)"
        }
    }

    /// The premises name (extended data code 0x10) if the extended data holds one; the core's
    /// `ExtendedDataReader` has already checked it is UTF-8.
    static func premisesName(_ extended: Span<UInt8>) -> String? {
        var reader = ExtendedDataReader(extended)
        while let section = try? reader.next() {
            guard section.code == ExtendedDataCode.premisesName else { continue }
            var bytes: [UInt8] = []
            for i in section.data.indices { bytes.append(section.data[i]) }
            return String(bytes: bytes, encoding: .utf8)
        }
        return nil
    }
}
