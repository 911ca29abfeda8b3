/// What kind of controller input `HCIHost` dropped. Each is counted apart, as TrouBLE counts its
/// host's drops and Zephyr's `hci_core.c` logs each with its own message: a count that grows names
/// the parser, or the controller, to look at.
public enum HCIDropKind: UInt8, Sendable {
    /// An event packet whose length octet disagrees with its bytes (Core 5.4 Vol 4 Part E 5.4.4).
    case eventPacket = 0
    /// Command Complete without the layout of 7.7.14 (a real command's, without even a status).
    case commandComplete
    /// Command Status without the layout of 7.7.15.
    case commandStatus
    /// An LE Meta event without even its subevent code (7.7.65).
    case leMetaWithoutSubevent
    /// An event about links, or Number Of Completed Packets, without its layout (7.7.5, 7.7.19,
    /// 7.7.65.1, .3, .6, .7, .10, .12): dropped whole, no link changed.
    case linkEvent
    /// One advertising report (7.7.65.2, 7.7.65.13) that does not parse: the reports before it are
    /// delivered, and those after it too when its extent could still be read.
    case advertisingReport
}

/// One dropped input: what it was, the event code, the LE subevent code (nil for other events) and
/// why it did not parse.
public struct HCIDrop: Equatable, Sendable {
    public var kind: HCIDropKind
    public var eventCode: UInt8
    public var subevent: UInt8?
    public var reason: DecodeError

    public init(kind: HCIDropKind, eventCode: UInt8, subevent: UInt8?, reason: DecodeError) {
        self.kind = kind
        self.eventCode = eventCode
        self.subevent = subevent
        self.reason = reason
    }
}

/// Where `HCIHostOf` keeps the input it drops (`LEApplication.InputDrops`): `HCIInputDrops` counts
/// and names them; `NoInputDrops`, for an application that never reads them (the firmware images),
/// keeps nothing and takes no room in the stack's value.
public protocol HCIInputDropRecording {
    init()
    /// False: nothing is ever recorded (and `LEApplication.recordsInputDrops` is false by default).
    static var keepsRecords: Bool { get }
    var total: Int { get }
    func count(of kind: HCIDropKind) -> Int
    var recentCount: Int { get }
    func recent(_ i: Int) -> HCIDrop
    mutating func record(_ kind: HCIDropKind, eventCode: UInt8, subevent: UInt8?, reason: DecodeError)
}

/// Keeps no drop: every count is 0.
public struct NoInputDrops: HCIInputDropRecording, Sendable {
    public init() {}
    public static var keepsRecords: Bool { false }
    public var total: Int { 0 }
    public func count(of kind: HCIDropKind) -> Int { 0 }
    public var recentCount: Int { 0 }
    public func recent(_ i: Int) -> HCIDrop { preconditionFailure("no drops are kept") }
    public mutating func record(_ kind: HCIDropKind, eventCode: UInt8, subevent: UInt8?, reason: DecodeError) {}
}

/// Input dropped by `HCIHost`: a count per kind, and the last `recentCapacity` drops with their reasons
/// in a ring (fixed size, no allocation: a noisy line overwrites the oldest). The runtime prints both
/// with `--stats`. Counters wrap (`LEStackCounters` says why).
public struct HCIInputDrops: HCIInputDropRecording, Sendable {
    public static var keepsRecords: Bool { true }
    public static var recentCapacity: Int { 4 }
    /// Every drop so far, of every kind.
    public private(set) var total = 0
    private var counts = InlineArray<6, Int>(repeating: 0)
    private var ring = InlineArray<4, HCIDrop>(
        repeating: HCIDrop(kind: .eventPacket, eventCode: 0, subevent: nil, reason: .trailingBytes(count: 0)))

    public init() {}

    /// How many inputs of `kind` were dropped.
    public func count(of kind: HCIDropKind) -> Int { counts[Int(kind.rawValue)] }

    /// How many drops the ring holds now (at most `recentCapacity`).
    public var recentCount: Int { total < Self.recentCapacity && total >= 0 ? total : Self.recentCapacity }

    /// The `i`th drop the ring holds, oldest first (0 ..< `recentCount`).
    public func recent(_ i: Int) -> HCIDrop {
        precondition(i >= 0 && i < recentCount, "recent drop index out of range")
        let oldest = recentCount < Self.recentCapacity ? 0 : Int(UInt(bitPattern: total) % UInt(Self.recentCapacity))
        return ring[(oldest &+ i) % Self.recentCapacity]
    }

    /// Counts a drop and keeps it in the ring. Not inlined: every drop site shares this one copy.
    @inline(never)
    public mutating func record(_ kind: HCIDropKind, eventCode: UInt8, subevent: UInt8?, reason: DecodeError) {
        counts[Int(kind.rawValue)] &+= 1
        ring[Int(UInt(bitPattern: total) % UInt(Self.recentCapacity))] =
            HCIDrop(kind: kind, eventCode: eventCode, subevent: subevent, reason: reason)
        total &+= 1
    }
}

extension HCIHostOf {
    /// Records a drop in `drops` for a delegate that keeps them (`HostDelegate.recordsInputDrops`, a
    /// constant after specialisation: for one that does not, the record and its reason are not built)
    /// into storage that keeps them (`Drops.keepsRecords`).
    @inline(__always)
    mutating func drop<D: HostDelegate>(_: D.Type, _ kind: HCIDropKind, eventCode: UInt8, subevent: UInt8? = nil,
                                        reason: DecodeError) {
        if D.recordsInputDrops && Drops.keepsRecords { drops.record(kind, eventCode: eventCode, subevent: subevent, reason: reason) }
    }
}
