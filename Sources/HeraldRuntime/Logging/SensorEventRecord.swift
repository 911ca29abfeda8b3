import Foundation

/// Which sensor produced an event; the raw value is what the Herald apps write in the `sensor` column.
public enum SensorKind: String, Sendable, Equatable, CaseIterable {
    case ble = "BLE"
    case blmesh = "BLMESH"
    case awake = "AWAKE"
    case gps = "GPS"
    case beacon = "BEACON"
    case ultrasound = "ULTRASOUND"
    case accelerometer = "ACCELEROMETER"
    case other = "OTHER"
}

/// One sensor delegate event, copied out of the run loop so loggers can format it on their own queue.
///
/// The kinds mirror the Herald `SensorDelegate` callbacks (didDetect, didRead, didMeasure, didShare,
/// didVisit, didDetect/didDelete with availability, didReceive). Only what the remote side broadcast
/// or sent travels here: payloads, addresses, signal strength. Keys never do, so no logger can leak one.
public struct SensorEventRecord: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, CaseIterable {
        /// A device was seen (any advertiser the sensor tracks).
        case detect
        /// A payload was read from the target (GATT read of the Herald payload characteristic).
        case read
        /// A proximity measurement (RSSI, optionally with the advertised Tx power).
        case measure
        /// The target shared payloads of others it has seen.
        case share
        /// A location visit (not produced by the Bluetooth sensor; kept for format completeness).
        case visit
        /// The target is confirmed to be a Herald device.
        case detectHerald
        /// The target dropped out of the sensor's database.
        case delete
        /// The target wrote immediate-send data to us.
        case receive
    }

    public var kind: Kind
    public var time: Date
    public var sensor: SensorKind
    /// Target identifier as the sensor names it (e.g. the peer's address, `C0:11:22:33:44:55`).
    public var target: String
    /// Payload read (`read`) or data received (`receive`).
    public var payload: [UInt8]
    /// dBm (`measure`).
    public var rssi: Double?
    /// Advertised transmit power, dBm (`measure`, optional calibration).
    public var txPower: Double?
    /// Payloads the target shared (`share`).
    public var sharedPayloads: [[UInt8]]
    /// Free text for `visit` (a location description).
    public var location: String?

    public init(kind: Kind, time: Date = Date(), sensor: SensorKind = .ble, target: String, payload: [UInt8] = [],
                rssi: Double? = nil, txPower: Double? = nil, sharedPayloads: [[UInt8]] = [], location: String? = nil) {
        self.kind = kind
        self.time = time
        self.sensor = sensor
        self.target = target
        self.payload = payload
        self.rssi = rssi
        self.txPower = txPower
        self.sharedPayloads = sharedPayloads
        self.location = location
    }

    public static func detect(_ target: String, sensor: SensorKind = .ble, at time: Date = Date()) -> Self {
        Self(kind: .detect, time: time, sensor: sensor, target: target)
    }
    public static func read(_ payload: [UInt8], from target: String, sensor: SensorKind = .ble, at time: Date = Date()) -> Self {
        Self(kind: .read, time: time, sensor: sensor, target: target, payload: payload)
    }
    public static func measure(rssi: Double, txPower: Double? = nil, from target: String, sensor: SensorKind = .ble,
                               at time: Date = Date()) -> Self {
        Self(kind: .measure, time: time, sensor: sensor, target: target, rssi: rssi, txPower: txPower)
    }
    public static func share(_ payloads: [[UInt8]], from target: String, sensor: SensorKind = .ble, at time: Date = Date()) -> Self {
        Self(kind: .share, time: time, sensor: sensor, target: target, sharedPayloads: payloads)
    }
}

/// The short name the Herald apps print for a payload (`PayloadData.shortName()`): empty for no bytes,
/// the Base64 of all bytes when there are at most 3, otherwise the first 6 characters of the Base64 of
/// everything after the 3-byte header (protocol and country/state codes), which is the part that differs
/// between devices.
public func payloadShortName(_ bytes: [UInt8]) -> String {
    if bytes.isEmpty { return "" }
    if bytes.count <= 3 { return Data(bytes).base64EncodedString() }
    return String(Data(bytes[3...]).base64EncodedString().prefix(6))
}

/// `yyyy-MM-dd HH:mm:ss.SSSZ` in UTC (`2026-11-21 10:00:00.123+0000`), the timestamp of the Herald logs.
/// Formatted by hand: `DateFormatter` is slow and not thread-safe to share on Linux.
public func logTimestamp(_ date: Date) -> String {
    let t = UTCTime(date)
    return "\(t.date) \(t.time).\(UTCTime.pad(t.ms, 3))+0000"
}

/// RFC 3339 in UTC, as `ISO8601DateFormatter` writes it with `.withInternetDateTime` (and
/// `.withFractionalSeconds`): `2026-11-21T10:00:00Z` (`2026-11-21T10:00:00.123Z`). Formatted by hand:
/// `ISO8601DateFormatter.string(from:timeZone:formatOptions:)` builds an ICU formatter on every call, and
/// that was 38 % of a crowd wearable's CPU with `--json-events` (`docs/crowd-issue-39.md`).
public func iso8601Timestamp(_ date: Date, fractionalSeconds: Bool) -> String {
    let t = UTCTime(date)
    return fractionalSeconds ? "\(t.date)T\(t.time).\(UTCTime.pad(t.ms, 3))Z" : "\(t.date)T\(t.time)Z"
}

/// A time's UTC calendar fields, truncated to the millisecond.
struct UTCTime {
    let date: String, time: String, ms: Int64

    init(_ d: Date) {
        let totalMs = Int64((d.timeIntervalSince1970 * 1000).rounded(.down))
        var days = totalMs / 86_400_000
        var msOfDay = totalMs % 86_400_000
        if msOfDay < 0 { msOfDay += 86_400_000; days -= 1 }
        // Civil date from days since 1970-01-01 (proleptic Gregorian; H. Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        let h = msOfDay / 3_600_000, mi = msOfDay / 60_000 % 60, s = msOfDay / 1000 % 60
        date = "\(Self.pad(y, 4))-\(Self.pad(m, 2))-\(Self.pad(day, 2))"
        time = "\(Self.pad(h, 2)):\(Self.pad(mi, 2)):\(Self.pad(s, 2))"
        ms = msOfDay % 1000
    }

    static func pad(_ v: Int64, _ w: Int) -> String {
        let t = String(v)
        return t.count >= w ? t : String(repeating: "0", count: w - t.count) + t
    }
}

/// Quotes a CSV value the way the Herald apps' `TextFile.csv` does: in double quotes when it holds a
/// comma, a double quote or an apostrophe, otherwise as is (inner quotes are not doubled there either).
public func heraldCSV(_ value: String) -> String {
    // By scalar, not Foundation's `contains(_: StringProtocol)`: this runs for every row of every log.
    if value.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "'" || $0 == "\u{2019}" }) {
        return "\"\(value)\""
    }
    return value
}

/// Java's `Double.toString` for the values the logs hold (`-66.0`, `1.5`): Swift's shortest
/// representation agrees for ordinary magnitudes.
func javaDouble(_ v: Double) -> String {
    // Whole values (every RSSI and Tx power) without `String(format:)`, which went through NSString.
    if v == v.rounded(), abs(v) < 1e7 { return (v.sign == .minus ? "-" : "") + String(Int(abs(v))) + ".0" }
    return "\(v)"
}
