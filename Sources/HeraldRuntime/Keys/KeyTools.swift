import Foundation
import BluetoothHost
import Herald

/// Host-side helpers around the core key schedule: times, epochs, Base64, the derive/export records.
public enum KeyTools {
    /// Parses ISO 8601 with or without fractional seconds (`2026-01-01T00:00:00Z`, `…+01:00`), or a
    /// bare date `2026-01-01` (midnight UTC). Returns Unix seconds.
    public static func parseTime(_ text: String) throws -> Int64 {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        if let d = f.date(from: text) { return Int64(d.timeIntervalSince1970.rounded(.down)) }
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let d = f.date(from: text) { return Int64(d.timeIntervalSince1970.rounded(.down)) }
        // A time of day without a zone is ambiguous (local? UTC?); the date-only parser would read its
        // date and drop the time, silently choosing period 0. Refuse it instead.
        if text.contains("T") {
            throw KeyToolError("cannot parse time \"\(text)\": give its zone, e.g. 2026-01-01T08:30:00Z (UTC) or 2026-01-01T08:30:00+01:00")
        }
        f.formatOptions = [.withFullDate]
        if text.count == 10, let d = f.date(from: text) { return Int64(d.timeIntervalSince1970) }
        throw KeyToolError("cannot parse time \"\(text)\": use ISO 8601, e.g. 2026-01-01T00:00:00Z or 2026-01-01")
    }

    public static func iso8601(_ unixSeconds: Int64) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: Date(timeIntervalSince1970: TimeInterval(unixSeconds)))
    }

    public static func dateOnly(_ unixSeconds: Int64) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withFullDate]
        return f.string(from: Date(timeIntervalSince1970: TimeInterval(unixSeconds)))
    }

    /// The epoch `text` (default `KeyEpoch.standard`) with periods of `secondsPerPeriod` (default the
    /// specification's 360 s).
    public static func epoch(_ text: String?, secondsPerPeriod: Int64? = nil) throws -> KeyEpoch {
        let start = try text.map(parseTime) ?? KeyEpoch.standard.unixSeconds
        guard let secondsPerPeriod else { return KeyEpoch(unixSeconds: start) }
        guard let epoch = KeyEpoch(unixSeconds: start, secondsPerPeriod: secondsPerPeriod) else {
            let allowed = KeyEpoch.allowedSecondsPerPeriod
            throw KeyToolError("a payload period of \(secondsPerPeriod) s is outside \(allowed.lowerBound)...\(allowed.upperBound) s")
        }
        return epoch
    }

    public static func base64<let N: Int>(_ a: InlineArray<N, UInt8>) -> String {
        Data((0..<N).map { a[$0] }).base64EncodedString()
    }

    public static func hex<C: Collection>(_ b: C) -> String where C.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(b.count * 2)
        for x in b { out.append(digits[Int(x >> 4)]); out.append(digits[Int(x & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Checks a day against the key horizon; returns a warning to print, throws past the horizon.
    public static func checkHorizon(day: Int, epoch: KeyEpoch) throws -> String? {
        if day < 0 { throw KeyToolError("day \(day) is before the epoch \(iso8601(epoch.unixSeconds))") }
        if day > SimpleKeySchedule.days {
            throw KeyToolError("day \(day) is past day \(SimpleKeySchedule.days), the last day this secret key has keys for (epoch \(iso8601(epoch.unixSeconds))); create a new secret key or use a later epoch")
        }
        let left = SimpleKeySchedule.days - day
        if left < KeyEpoch.warningDays {
            return "warning: day \(day) is \(left) day(s) from day \(SimpleKeySchedule.days), the end of this secret key's schedule; plan a new key"
        }
        return nil
    }

    /// Everything `herald keys derive` prints for one day and period.
    public struct Derived: Equatable, Codable {
        public var day: Int
        public var period: Int
        public var matchingKeySeed: String
        public var matchingKey: String
        public var contactKeySeed: String
        public var contactKey: String
        public var contactIdentifier: String
        public var payload: String
    }

    public static func derive(secretKey: [UInt8], day: Int, period: Int, header: PayloadHeader,
                              order: PayloadCodeByteOrder) throws -> Derived {
        guard period >= 0, period <= SimpleKeySchedule.periods else {
            throw KeyToolError("period \(period) is outside 0...\(SimpleKeySchedule.periods)")
        }
        guard secretKey.count == SimpleKeySchedule.secretKeySize else {
            throw KeyToolError("secret key must be \(SimpleKeySchedule.secretKeySize) bytes")
        }
        guard let seed = SimpleKeySchedule.matchingKeySeed(secretKey: secretKey.span, day: day) else {
            throw KeyToolError("day \(day) is outside 0...\(SimpleKeySchedule.days)")
        }
        let matchingKey = SimpleKeySchedule.key(fromSeed: seed)
        let cSeed = SimpleKeySchedule.contactKeySeed(matchingKey: matchingKey, period: period)!
        let cKey = SimpleKeySchedule.key(fromSeed: cSeed)
        let id = SimpleKeySchedule.contactIdentifier(contactKey: cKey)
        var sink = KeysByteSink()
        do {
            try SimplePayload.write(header: header, contactIdentifier: id, extendedData: Span(), order: order, to: &sink)
        } catch {
            throw KeyToolError("cannot build payload: \(error)")
        }
        return Derived(day: day, period: period, matchingKeySeed: base64(seed), matchingKey: base64(matchingKey),
                       contactKeySeed: base64(cSeed), contactKey: base64(cKey), contactIdentifier: base64(id),
                       payload: hex(sink.bytes))
    }

    /// `day,date,matchingKey` rows for the days covering [from, to] (UTC), derived in one chain walk.
    public static func exportMatchingKeys(secretKey: [UInt8], epoch: KeyEpoch, from: Int64, to: Int64)
        throws -> (csv: String, warning: String?) {
        guard to >= from else { throw KeyToolError("--to is before --from") }
        guard let first = epoch.day(at: from) else {
            throw KeyToolError("--from is before the epoch \(iso8601(epoch.unixSeconds))")
        }
        let last = epoch.day(at: to)!
        _ = try checkHorizon(day: first, epoch: epoch)
        let warning = try checkHorizon(day: last, epoch: epoch)
        let keys = matchingKeys(secretKey: secretKey, days: first...last)
        var csv = "day,date,matchingKey\n"
        for (i, day) in (first...last).enumerated() {
            csv += "\(day),\(dateOnly(epoch.start(day: day, period: 0))),\(keys[i])\n"
        }
        return (csv, warning)
    }

    /// Base64 matching keys for `days`, one walk of the seed chain from day 2000.
    public static func matchingKeys(secretKey: [UInt8], days: ClosedRange<Int>) -> [String] {
        var seed = SimpleKeySchedule.lastMatchingKeySeed(secretKey: secretKey.span)
        var out = [String](repeating: "", count: days.count)
        var d = SimpleKeySchedule.days
        while d >= days.lowerBound {
            if days.contains(d) { out[d - days.lowerBound] = base64(SimpleKeySchedule.key(fromSeed: seed)) }
            seed = SimpleKeySchedule.hashOfTruncation(seed)
            d -= 1
        }
        return out
    }
}

/// A growable sink for the key tools.
struct KeysByteSink: ByteSink {
    var bytes: [UInt8] = []
    mutating func append(_ byte: UInt8) { bytes.append(byte) }
}
