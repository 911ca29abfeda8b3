/// The LE features page 0 a controller reports (Core 5.4 Vol 6 Part B 4.6), as returned by
/// LE Read Local Supported Features (Core 5.4 Vol 4 Part E 7.8.3) and LE Read Remote Features.
///
/// Bit n of the 64-bit little-endian mask is feature n. Names for display come from a switch
/// (`name(ofBit:)`) so the table costs no array or heap in the core.
public struct LEFeatures: HCIReturnParameters, Equatable, Hashable, Sendable {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(parameters, exactly: 8)
        rawValue = try r.u64()
        try r.expectEnd()
    }

    public func contains(bit: Int) -> Bool {
        guard bit >= 0, bit < 64 else { return false }
        return rawValue & (1 &<< UInt64(widening: UInt(bit))) != 0
    }

    // Bit numbers used by the host (Core 5.4 Vol 6 Part B 4.6, table 4.4).
    public static let encryptionBit = 0
    public static let connectionParametersRequestBit = 1
    public static let extendedRejectIndicationBit = 2
    public static let peripheralInitiatedFeaturesExchangeBit = 3
    public static let pingBit = 4
    public static let dataPacketLengthExtensionBit = 5
    public static let llPrivacyBit = 6
    public static let extendedScanningFilterPoliciesBit = 7
    public static let le2MPHYBit = 8
    public static let leCodedPHYBit = 11
    public static let extendedAdvertisingBit = 12
    public static let periodicAdvertisingBit = 13
    public static let channelSelectionAlgorithm2Bit = 14

    public var encryption: Bool { contains(bit: Self.encryptionBit) }
    public var dataPacketLengthExtension: Bool { contains(bit: Self.dataPacketLengthExtensionBit) }
    public var llPrivacy: Bool { contains(bit: Self.llPrivacyBit) }
    public var le2MPHY: Bool { contains(bit: Self.le2MPHYBit) }
    public var leCodedPHY: Bool { contains(bit: Self.leCodedPHYBit) }
    public var extendedAdvertising: Bool { contains(bit: Self.extendedAdvertisingBit) }

    /// The specification's name for a feature bit, or nil for a bit the table reserves.
    /// Bits 46-48 were added after 5.4 (Channel Sounding); they are named so newer controllers print well.
    public static func name(ofBit bit: Int) -> StaticString? {
        switch bit {
        case 0: return "LE Encryption"
        case 1: return "Connection Parameters Request procedure"
        case 2: return "Extended Reject Indication"
        case 3: return "Peripheral-initiated Features Exchange"
        case 4: return "LE Ping"
        case 5: return "LE Data Packet Length Extension"
        case 6: return "LL Privacy"
        case 7: return "Extended Scanning Filter Policies"
        case 8: return "LE 2M PHY"
        case 9: return "Stable Modulation Index - Transmitter"
        case 10: return "Stable Modulation Index - Receiver"
        case 11: return "LE Coded PHY"
        case 12: return "LE Extended Advertising"
        case 13: return "LE Periodic Advertising"
        case 14: return "Channel Selection Algorithm #2"
        case 15: return "LE Power Class 1"
        case 16: return "Minimum Number of Used Channels procedure"
        case 17: return "Connection CTE Request"
        case 18: return "Connection CTE Response"
        case 19: return "Connectionless CTE Transmitter"
        case 20: return "Connectionless CTE Receiver"
        case 21: return "Antenna Switching During CTE Transmission (AoD)"
        case 22: return "Antenna Switching During CTE Reception (AoA)"
        case 23: return "Receiving Constant Tone Extensions"
        case 24: return "Periodic Advertising Sync Transfer - Sender"
        case 25: return "Periodic Advertising Sync Transfer - Recipient"
        case 26: return "Sleep Clock Accuracy Updates"
        case 27: return "Remote Public Key Validation"
        case 28: return "Connected Isochronous Stream - Central"
        case 29: return "Connected Isochronous Stream - Peripheral"
        case 30: return "Isochronous Broadcaster"
        case 31: return "Synchronized Receiver"
        case 32: return "Connected Isochronous Stream (Host Support)"
        case 33: return "LE Power Control Request"
        case 34: return "LE Power Change Indication"
        case 35: return "LE Path Loss Monitoring"
        case 36: return "Periodic Advertising ADI support"
        case 37: return "Connection Subrating"
        case 38: return "Connection Subrating (Host Support)"
        case 39: return "Channel Classification"
        case 40: return "Advertising Coding Selection"
        case 41: return "Advertising Coding Selection (Host Support)"
        case 43: return "Periodic Advertising with Responses - Advertiser"
        case 44: return "Periodic Advertising with Responses - Scanner"
        case 45: return "Unsegmented Framed Mode"
        case 46: return "Channel Sounding"
        case 47: return "Channel Sounding (Host Support)"
        case 48: return "Channel Sounding Tone Quality Indication"
        default: return nil
        }
    }

    /// Calls `body` for every set bit in ascending order, with its name (nil if reserved/unknown).
    public func forEachSupported(_ body: (Int, StaticString?) -> Void) {
        for bit in 0..<64 where contains(bit: bit) { body(bit, Self.name(ofBit: bit)) }
    }
}
