// The LE PHY commands and event (Core 5.4 Vol 4 Part E 7.8.47-7.8.49, 7.7.65.12).
//
// At the LE 2M PHY a 251-octet LL PDU takes 1064 µs of air instead of 2120 µs (Core 5.4 Vol 6
// Part B 2.1, 4.5.10), so a link carries about twice the data per connection event. Links start on
// LE 1M (Vol 6 Part B 5.1.10); only a PHY Update procedure moves them, and controllers start none of
// their own, so the host asks: LE Set Default PHY once at bring-up, LE Set PHY on each link.

/// A PHY as the LE PHY commands and events number it (Core 5.4 Vol 4 Part E 7.7.65.12). Coded is
/// named so a report of it reads well; the host never asks for it.
public struct LEPHY: RawRepresentable, Equatable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let le1M = LEPHY(rawValue: 0x01)
    public static let le2M = LEPHY(rawValue: 0x02)
    public static let leCoded = LEPHY(rawValue: 0x03)

    /// "1M", "2M", "Coded", or the code in hex for a value the Core reserves.
    public var name: StaticString {
        switch rawValue {
        case 0x01: return "1M"
        case 0x02: return "2M"
        case 0x03: return "Coded"
        default: return "reserved"
        }
    }
}

/// The PHYs a host will accept in one direction, as the bit field of LE Set Default PHY and LE Set
/// PHY (Core 5.4 Vol 4 Part E 7.8.48, 7.8.49): bit 0 LE 1M, bit 1 LE 2M, bit 2 LE Coded.
public struct LEPHYPreference: RawRepresentable, Equatable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let le1M = LEPHYPreference(rawValue: 0x01)
    public static let le2M = LEPHYPreference(rawValue: 0x02)
    /// 1M or 2M, 2M preferred: the controller picks 2M when the peer supports it, and stays at 1M
    /// with one that does not, instead of refusing the procedure.
    public static let le1MOr2M = LEPHYPreference(rawValue: 0x03)
}

/// LE Set Default PHY (Core 5.4 Vol 4 Part E 7.8.48): the PHYs the controller prefers for links
/// made afterwards, and answers a peer's PHY Update request with.
public struct HCILESetDefaultPHY: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x0031)
    public var tx: LEPHYPreference
    public var rx: LEPHYPreference

    public init(tx: LEPHYPreference = .le1MOr2M, rx: LEPHYPreference = .le1MOr2M) {
        self.tx = tx
        self.rx = rx
    }

    public func writeParameters<S: ByteSink>(to sink: inout S) {
        sink.append(0x00)  // All_PHYs: the host states a preference for both directions
        sink.append(tx.rawValue)
        sink.append(rx.rawValue)
    }
}

/// LE Set PHY (Core 5.4 Vol 4 Part E 7.8.49): start the PHY Update procedure on one link. Answered
/// with Command Status; LE PHY Update Complete follows with the PHYs in use (also when nothing changed).
public struct HCILESetPHY: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x0032)
    public var handle: UInt16
    public var tx: LEPHYPreference
    public var rx: LEPHYPreference

    public init(handle: UInt16, tx: LEPHYPreference = .le1MOr2M, rx: LEPHYPreference = .le1MOr2M) {
        self.handle = handle
        self.tx = tx
        self.rx = rx
    }

    public func writeParameters<S: ByteSink>(to sink: inout S) {
        sink.append(u16: handle)
        sink.append(0x00)  // All_PHYs
        sink.append(tx.rawValue)
        sink.append(rx.rawValue)
        sink.append(u16: 0x0000)  // PHY_Options: no Coded preference
    }
}

/// LE PHY Update Complete (Core 5.4 Vol 4 Part E 7.7.65.12): a PHY Update procedure ended, started
/// by either side; with success the link now uses these PHYs.
public struct HCILEPHYUpdateCompleteEvent: Equatable, Sendable {
    public static let subevent = HCILESubeventCode.phyUpdateComplete
    public var status: HCIStatus
    public var handle: UInt16
    public var txPHY: LEPHY
    public var rxPHY: LEPHY

    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(parameters, exactly: 5)
        status = HCIStatus(rawValue: try r.u8())
        handle = try r.u16() & 0x0FFF
        txPHY = LEPHY(rawValue: try r.u8())
        rxPHY = LEPHY(rawValue: try r.u8())
        try r.expectEnd()
    }

    public init(_ meta: HCILEMetaEvent) throws(DecodeError) {
        try expectSubevent(meta.subevent, Self.subevent)
        try self.init(parsing: meta.parameters)
    }
}

/// The PHYs in use on a link, each direction: LE 1M until a PHY Update (Core 5.4 Vol 6 Part B 5.1.10).
public struct LinkPHY: Sendable, Equatable {
    public var tx: LEPHY
    public var rx: LEPHY
    public init(tx: LEPHY, rx: LEPHY) {
        self.tx = tx
        self.rx = rx
    }
    public static var initial: LinkPHY { LinkPHY(tx: .le1M, rx: .le1M) }
}
