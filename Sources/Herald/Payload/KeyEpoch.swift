import BluetoothHost

/// Where day 0 of a key schedule starts, and the day/period arithmetic on UTC time.
///
/// The core reads no clock: times come in as seconds since 1970-01-01T00:00:00Z. A day is 86400 s
/// from the epoch, a period 360 s within it (240 per day; Herald Simple payload specification).
///
/// For tests the period can be shorter (`secondsPerPeriod`): a day of the key schedule is then still
/// 240 periods (so 240 × the period, not 86400 s), so every period has its own contact identifier and
/// key derivation is unchanged; only the wall-clock length of a period and of a day shrink. Everyone
/// who derives or attributes payloads for such a run (wearable, `herald keys derive`) must use the same
/// period. Real deployments keep 360 s: phones rotate on that grid.
public struct KeyEpoch: Equatable, Sendable {
    public var unixSeconds: Int64
    /// Length of one payload period in seconds (`specificationSecondsPerPeriod` unless shortened for a
    /// test); always within `allowedSecondsPerPeriod`.
    public private(set) var secondsPerPeriod: Int64

    /// The epoch on the specification's 360 s grid.
    public init(unixSeconds: Int64) {
        self.unixSeconds = unixSeconds
        secondsPerPeriod = Self.specificationSecondsPerPeriod
    }

    /// An epoch whose periods last `secondsPerPeriod`; nil outside `allowedSecondsPerPeriod`.
    public init?(unixSeconds: Int64, secondsPerPeriod: Int64) {
        guard Self.allowedSecondsPerPeriod.contains(secondsPerPeriod) else { return nil }
        self.unixSeconds = unixSeconds
        self.secondsPerPeriod = secondsPerPeriod
    }

    /// 2020-09-24T00:00:00Z, the reference apps' epoch (the test vectors use it). Its day 2000 was
    /// 2026-03-17, so it cannot serve new deployments.
    public static let reference = KeyEpoch(unixSeconds: 1_600_905_600)
    /// 2026-01-01T00:00:00Z, this project's default.
    public static let standard = KeyEpoch(unixSeconds: 1_767_225_600)

    /// 86 400 s / 240 periods (Herald Simple payload specification).
    public static let specificationSecondsPerPeriod: Int64 = 360
    public static let periodsPerDay: Int64 = 240
    /// The shortest period leaves time for the advertiser's preparation lead (5 s) and two controller
    /// round trips before each boundary, and for a peer to find the new address and read the new
    /// payload; the longest is the specification's.
    public static let allowedSecondsPerPeriod: ClosedRange<Int64> = 10...360
    /// A day of the key schedule: 240 periods (86 400 s on the specification's grid).
    public var secondsPerDay: Int64 { Self.periodsPerDay &* secondsPerPeriod }
    /// Tools warn this many days before the horizon.
    public static let warningDays = 30

    /// Day index of `time`, or nil before the epoch.
    public func day(at time: Int64) -> Int? {
        let elapsed = time &- unixSeconds
        guard elapsed >= 0 else { return nil }
        return Int(clamping64: elapsed / secondsPerDay)
    }

    /// Period index (0..<240) of `time` within its day, or nil before the epoch.
    public func period(at time: Int64) -> Int? {
        let elapsed = time &- unixSeconds
        guard elapsed >= 0 else { return nil }
        return Int(truncatingIfNeeded: (elapsed % secondsPerDay) / secondsPerPeriod)
    }

    /// First second of `day`/`period`.
    public func start(day: Int, period: Int) -> Int64 {
        unixSeconds &+ Int64(widening: day) &* secondsPerDay &+ Int64(widening: period) &* secondsPerPeriod
    }

    /// When the period containing `time` ends: when the contact identifier and our resolvable private
    /// address both rotate.
    public func nextRotation(after time: Int64) -> Int64 {
        let elapsed = time &- unixSeconds
        guard elapsed >= 0 else { return unixSeconds }
        return time &+ (secondsPerPeriod &- elapsed % secondsPerPeriod)
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
