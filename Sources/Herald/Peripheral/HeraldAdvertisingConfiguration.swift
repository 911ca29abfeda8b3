import BluetoothHost

/// Maps the stack's monotonic milliseconds to UTC and back. The core reads no clock: the runtime
/// (or firmware, from its RTC) says what UTC time stack time 0 was.
public struct HeraldClock: Sendable, Equatable {
    /// Milliseconds since 1970-01-01T00:00:00Z at stack time 0.
    public var unixMillisAtZero: Int64

    public init(unixMillisAtZero: Int64) { self.unixMillisAtZero = unixMillisAtZero }

    public func unixMillis(now: UInt64) -> Int64 { unixMillisAtZero &+ Int64(bitPattern: now) }
    public func unixSeconds(now: UInt64) -> Int64 { Self.floorDivide(unixMillis(now: now), 1_000) }

    /// The stack time of `unixMillis` (0 for instants before stack time 0).
    public func stackTime(unixMillis: Int64) -> UInt64 {
        let t = unixMillis &- unixMillisAtZero
        return t < 0 ? 0 : UInt64(bitPattern: t)
    }

    /// Division rounding towards minus infinity, so periods before the epoch still tile the line.
    static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q &- 1 : q
    }
}

/// Command tags of the Herald peripheral (`CommandTag` values 0x0148...0x014A): an application that
/// embeds it passes completions with these tags to `HeraldPeripheral.stackCommandDidComplete`.
public enum HeraldCommandTag {
    public static let random = CommandTag(rawValue: 0x0148)
    public static let encrypt = CommandTag(rawValue: 0x0149)
    public static let advertising = CommandTag(rawValue: 0x014A)

    public static func owns(_ tag: CommandTag) -> Bool { tag.rawValue >= 0x0148 && tag.rawValue <= 0x014A }
}

/// How the peripheral advertises.
public struct HeraldAdvertisingConfiguration: Sendable {
    // The 64-bit fields first and the odd-sized ones last, so no padding lies inside: LLVM split the
    // advertiser built in its place at the padding after `irk` (offset 25) and stored every later
    // field (the whole advertiser, 264 octets) as 1-aligned, which the Cortex-M0 (no unaligned
    // access) does an octet at a time (docs/footprint.md, issue 37's fifth round).
    /// The period grid (360 s periods from this epoch, unless shortened for a test) the address rotates on; the same as the key
    /// schedule's, so the address and the contact identifier change at the same instant.
    public var epoch: KeyEpoch
    /// How long before a period boundary the next address is computed (ms), so it is ready to set at
    /// the boundary itself: LE Rand and LE Encrypt are two controller round trips.
    public var preparationLead: Int64
    /// Advertising interval in units of 0.625 ms (Core 5.4 Vol 4 Part E 7.8.5: 0x0020...0x4000).
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    /// Identity resolving key, HCI byte order. With one, the peripheral advertises a resolvable
    /// private address that changes with every payload period; without, the controller's identity
    /// address (what a venue beacon, which has nothing to hide, uses).
    public var irk: InlineArray<16, UInt8>?
    public var txPower: Int8?
    /// Which service UUID the advertisement carries (the other goes in the scan response).
    public var identifiers: HeraldAdvertIdentifiers

    public init(identifiers: HeraldAdvertIdentifiers = .specification, intervalMilliseconds: Int = 200,
                txPower: Int8? = nil, irk: InlineArray<16, UInt8>? = nil, epoch: KeyEpoch = .standard,
                preparationLead: Int64 = 5_000) {
        self.identifiers = identifiers
        let units = UInt16(clamping: max(0x20, min(0x4000, intervalMilliseconds * 8 / 5)))
        intervalMin = units
        intervalMax = units
        self.txPower = txPower
        self.irk = irk
        self.epoch = epoch
        self.preparationLead = preparationLead
    }
}
