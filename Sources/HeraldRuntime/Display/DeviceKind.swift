import Foundation
import Herald

/// What a nearby device is, in the one vocabulary every command shows (`scan`, `wearable`, `sense`, the
/// HTML report): the table's words are `description`, JSON carries `rawValue`.
public enum DeviceKind: String, Codable, CaseIterable, Sendable, CustomStringConvertible {
    /// Serves a Simple payload (0x10–0x17), or the Herald reference's fixed test payload (0x08, what
    /// herald-for-cpp's wearable sample serves): a Herald wearable or a phone app we could not place.
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
        else if SimplePayload.protocolRange.contains(first) || first == FixedTestPayload.protocolAndVersion { self = .heraldWearable }
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
