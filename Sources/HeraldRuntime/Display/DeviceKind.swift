import Foundation
import Herald

/// What a nearby device is, in the one vocabulary every command shows (`scan`, `wearable`, `sense`, the
/// HTML report): the table's words are `description`, JSON carries `rawValue`.
public enum DeviceKind: String, Codable, CaseIterable, Sendable, CustomStringConvertible {
    /// Serves a Simple payload (0x10–0x17): a Herald wearable or a phone app we could not place.
    case heraldWearable = "herald-wearable"
    /// Serves a venue beacon payload (0x30–0x37).
    case venueBeacon = "venue-beacon"
    /// Advertises the Herald service but its payload has not been read yet, so wearable or beacon is unknown.
    case herald = "herald"
    /// A Herald Android phone (its pseudo device address) or an Android device the sensor placed.
    case android = "android"
    /// An iPhone or iPad running Herald (Apple, with the Herald service).
    case ios = "ios"
    /// An Apple device without the Herald service (or not yet checked).
    case appleOther = "apple-other"
    case other = "other"

    public var description: String {
        switch self {
        case .heraldWearable: "Herald wearable"
        case .venueBeacon: "venue beacon"
        case .herald: "Herald (not read)"
        case .android: "Android"
        case .ios: "iOS"
        case .appleOther: "Apple other"
        case .other: "other"
        }
    }

    /// The kind a payload shows: venue beacon or Herald wearable; nil when it is neither.
    public init?(payload: [UInt8]) {
        guard let first = payload.first else { return nil }
        if VenueBeaconPayload.protocolRange.contains(first) { self = .venueBeacon }
        else if SimplePayload.protocolRange.contains(first) { self = .heraldWearable }
        else { return nil }
    }

    /// From what an advertiser showed (`HeraldAdvertClassification`) and, once read, its payload.
    /// The payload decides between wearable and beacon; a Herald Android phone advertises a pseudo
    /// device address; an Apple device with the Herald service is an iPhone or iPad running Herald.
    public static func of(herald: Bool, apple: Bool, pseudoAddress: Bool, payload: [UInt8]?) -> DeviceKind {
        if pseudoAddress { return .android }
        if apple { return herald ? .ios : .appleOther }
        if let payload, let kind = DeviceKind(payload: payload) { return kind }
        return herald ? .herald : .other
    }
}

extension DeviceKind {
    /// From the sensor's database entry. The payload decides before the operating system guess: the
    /// core marks every device serving the compliant signal characteristic `.android`, and our own nRF
    /// wearables and beacons serve that too, so "Android" there would mislabel them.
    public static func of(sensor kind: HeraldDeviceKind, os: HeraldDeviceOS, hasHeraldService: Bool?,
                          pseudoAddress: Bool, payload: [UInt8]) -> DeviceKind {
        if pseudoAddress { return .android }
        if os == .ios { return .ios }
        if let fromPayload = DeviceKind(payload: payload) { return fromPayload }
        switch kind {
        case .appleToCheck: return hasHeraldService == true ? .ios : .appleOther
        case .herald, .receiveOnly: return .herald
        }
    }
}

/// A payload decoded for people: `Simple 826/0 AbCdEf` (country/state, the contact identifier's short
/// name), `venue 826/0 location 12345 "Café Nord"` (premises name from the extended data).
public enum PayloadDescription {
    public static func text(_ bytes: [UInt8]) -> String {
        guard let first = bytes.first else { return "-" }
        func header() -> String? {
            guard bytes.count >= 5 else { return nil }
            return "\(UInt16(bytes[1]) << 8 | UInt16(bytes[2]))/\(UInt16(bytes[3]) << 8 | UInt16(bytes[4]))"
        }
        if SimplePayload.protocolRange.contains(first), bytes.count >= SimplePayload.minimumSize, let h = header() {
            return "Simple \(h) \(payloadShortName(bytes))"
        }
        if VenueBeaconPayload.protocolRange.contains(first), bytes.count >= VenueBeaconPayload.minimumSize, let h = header() {
            let location = bytes[5..<9].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            var text = "venue \(h) location \(location)"
            if let name = premisesName(Array(bytes[9...])) { text += " \"\(name)\"" }
            return text
        }
        return payloadShortName(bytes)
    }

    /// The premises name (extended data code 0x10) if the extended data holds one as UTF-8; read with
    /// the core's `ExtendedDataReader`, so a malformed section ends the search.
    static func premisesName(_ extended: [UInt8]) -> String? {
        extended.withUnsafeBufferPointer { b -> String? in
            var reader = ExtendedDataReader(Span(_unsafeElements: b))
            while let section = try? reader.next() {
                guard section.code == ExtendedDataCode.premisesName else { continue }
                var bytes: [UInt8] = []
                for i in section.data.indices { bytes.append(section.data[i]) }
                return String(bytes: bytes, encoding: .utf8)
            }
            return nil
        }
    }
}
