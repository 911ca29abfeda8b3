import BluetoothHost

/// Where day 0 of a key schedule starts, and the day/period arithmetic on UTC time.
///
/// The core reads no clock: times come in as seconds since 1970-01-01T00:00:00Z. A day is 86400 s
/// from the epoch, a period 360 s within it (240 per day; Herald Simple payload specification).
public struct KeyEpoch: Equatable, Sendable {
    public var unixSeconds: Int64

    public init(unixSeconds: Int64) { self.unixSeconds = unixSeconds }

    /// 2020-09-24T00:00:00Z, the reference apps' epoch (the test vectors use it). Its day 2000 was
    /// 2026-03-17, so it cannot serve new deployments.
    public static let reference = KeyEpoch(unixSeconds: 1_600_905_600)
    /// 2026-01-01T00:00:00Z, this project's default.
    public static let standard = KeyEpoch(unixSeconds: 1_767_225_600)

    public static let secondsPerDay: Int64 = 86_400
    public static let secondsPerPeriod: Int64 = 360
    /// Tools warn this many days before the horizon.
    public static let warningDays = 30

    /// Day index of `time`, or nil before the epoch.
    public func day(at time: Int64) -> Int? {
        let elapsed = time &- unixSeconds
        guard elapsed >= 0 else { return nil }
        return Int(clamping64: elapsed / Self.secondsPerDay)
    }

    /// Period index (0..<240) of `time` within its day, or nil before the epoch.
    public func period(at time: Int64) -> Int? {
        let elapsed = time &- unixSeconds
        guard elapsed >= 0 else { return nil }
        return Int(truncatingIfNeeded: (elapsed % Self.secondsPerDay) / Self.secondsPerPeriod)
    }

    /// First second of `day`/`period`.
    public func start(day: Int, period: Int) -> Int64 {
        unixSeconds &+ Int64(widening: day) &* Self.secondsPerDay &+ Int64(widening: period) &* Self.secondsPerPeriod
    }

    /// When the period containing `time` ends: when the contact identifier and our resolvable private
    /// address both rotate.
    public func nextRotation(after time: Int64) -> Int64 {
        let elapsed = time &- unixSeconds
        guard elapsed >= 0 else { return unixSeconds }
        return time &+ (Self.secondsPerPeriod &- elapsed % Self.secondsPerPeriod)
    }

    /// Whether `time` still has keys: tools warn near the horizon and refuse past it instead of
    /// emitting identifiers from a schedule that has run out.
    public func horizon(at time: Int64) -> KeyHorizon {
        guard let d = day(at: time) else { return .beforeEpoch }
        if d > SimpleKeySchedule.days { return .pastHorizon(day: d) }
        let left = SimpleKeySchedule.days - d
        return left < Self.warningDays ? .nearHorizon(day: d, daysLeft: left) : .ok(day: d)
    }
}

public enum KeyHorizon: Equatable, Sendable {
    case beforeEpoch
    case ok(day: Int)
    case nearHorizon(day: Int, daysLeft: Int)
    case pastHorizon(day: Int)

    /// True when keys exist for the time (possibly near the end).
    public var isUsable: Bool {
        switch self {
        case .ok, .nearHorizon: return true
        case .beforeEpoch, .pastHorizon: return false
        }
    }
}
