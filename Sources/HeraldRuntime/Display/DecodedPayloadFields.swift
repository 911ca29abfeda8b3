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
    /// `simple` (0x10–0x17) or `venue` (0x30–0x37).
    public var type: String
    public var protocolAndVersion: Int
    public var country: Int
    public var state: Int
    /// Venue beacon payloads only.
    public var locationCode: UInt32?
    /// `spec` or `apps` (see `PayloadCodeByteOrder.optionName`).
    public var byteOrder: String

    /// nil when the bytes are neither a Simple nor a venue beacon payload.
    public static func decode(_ bytes: [UInt8], order: PayloadCodeByteOrder) -> DecodedPayloadFields? {
        let span = bytes.span
        if let p = try? SimplePayload(parsing: span, order: order) {
            return DecodedPayloadFields(type: "simple", protocolAndVersion: Int(p.header.protocolAndVersion),
                                        country: Int(p.header.countryCode), state: Int(p.header.stateCode),
                                        locationCode: nil, byteOrder: order.optionName)
        }
        if let v = try? VenueBeaconPayload(parsing: span, order: order) {
            return DecodedPayloadFields(type: "venue", protocolAndVersion: Int(v.header.protocolAndVersion),
                                        country: Int(v.header.countryCode), state: Int(v.header.stateCode),
                                        locationCode: v.locationCode, byteOrder: order.optionName)
        }
        return nil
    }

    /// `826/4` or `826/4/123456` (country/state[/location]).
    public var codes: String {
        "\(country)/\(state)" + (locationCode.map { "/\($0)" } ?? "")
    }
}
