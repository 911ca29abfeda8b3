/// An HCI command opcode: OGF in the top 6 bits, OCF in the low 10 (Core 5.4 Vol 4 Part E 5.4.1).
public struct HCIOpcode: RawRepresentable, Equatable, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(ogf: UInt8, ocf: UInt16) { rawValue = UInt16(ogf) << 10 | (ocf & 0x03FF) }

    public var ogf: UInt8 { UInt8(truncatingIfNeeded: rawValue >> 10) }
    public var ocf: UInt16 { rawValue & 0x03FF }
    /// OGF 0x3F is vendor specific: its meaning depends on who made the controller.
    public var isVendorSpecific: Bool { ogf == 0x3F }

    /// Opcode 0x0000 in Command Complete/Status means "no operation": the controller only
    /// announces how many commands it will accept (Core 5.4 Vol 4 Part E 7.7.14).
    public static let nop = HCIOpcode(rawValue: 0x0000)
}

/// The status byte every Command Complete/Status carries (Core 5.4 Vol 1 Part F, error codes).
public struct HCIStatus: RawRepresentable, Equatable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let success = HCIStatus(rawValue: 0x00)
    public static let unknownCommand = HCIStatus(rawValue: 0x01)
    public static let unknownConnectionIdentifier = HCIStatus(rawValue: 0x02)
    public static let hardwareFailure = HCIStatus(rawValue: 0x03)
    public static let connectionTimeout = HCIStatus(rawValue: 0x08)
    public static let commandDisallowed = HCIStatus(rawValue: 0x0C)
    public static let connectionRejectedLimitedResources = HCIStatus(rawValue: 0x0D)
    public static let invalidParameters = HCIStatus(rawValue: 0x12)
    public static let remoteUserTerminated = HCIStatus(rawValue: 0x13)
    public static let localHostTerminated = HCIStatus(rawValue: 0x16)
    public static let unsupportedRemoteFeature = HCIStatus(rawValue: 0x1A)
    public static let connectionAlreadyExists = HCIStatus(rawValue: 0x0B)
    public static let unacceptableConnectionParameters = HCIStatus(rawValue: 0x3B)
    public static let advertisingTimeout = HCIStatus(rawValue: 0x3C)
    public static let connectionFailedToEstablish = HCIStatus(rawValue: 0x3E)
    public static let unknownAdvertisingIdentifier = HCIStatus(rawValue: 0x42)
    public static let operationCancelledByHost = HCIStatus(rawValue: 0x44)
}
