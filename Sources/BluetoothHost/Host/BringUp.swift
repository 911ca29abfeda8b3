/// The controller bring-up sequence, one step per command, in the order they are sent.
///
/// It is a straight line with a few skips decided from what earlier steps learned (supported
/// commands, manufacturer), so reading `next(after:)` top to bottom tells the whole story.
public enum BringUpStep: Equatable, Sendable {
    case reset
    case readLocalVersion
    case readLocalSupportedCommands
    case readLocalSupportedFeatures
    case setEventMask
    case leSetEventMask
    case leReadBufferSizeV2
    case leReadBufferSize
    /// Only when the LE pool is absent (LE ACL length 0): the shared pool applies (Core 5.4 Vol 4 Part E 7.8.2).
    case readBufferSize
    case leReadLocalSupportedFeatures
    case readBDADDR
    case leReadMaximumDataLength
    case leWriteSuggestedDefaultDataLength
    case zephyrReadVersionInformation
    case zephyrReadSupportedCommands
    case zephyrReadStaticAddresses
    case leSetRandomAddress
}

/// Event masks the host needs.
public enum HostEventMasks {
    /// Disconnection Complete (bit 4), Encryption Change (7), Read Remote Version Information Complete
    /// (11), Hardware Error (15), Data Buffer Overflow (25), Encryption Key Refresh Complete (47) and
    /// LE Meta (61) (Core 5.4 Vol 4 Part E 7.3.1). Command Complete/Status are always delivered.
    public static let events: UInt64 = 0x2000_8000_0200_8890
    /// LE Connection Complete (bit 0), Advertising Report (1), Connection Update Complete (2), Read
    /// Remote Features Complete (3), Remote Connection Parameter Request (5), Data Length Change (6),
    /// Enhanced Connection Complete (9), PHY Update Complete (11), Extended Advertising Report (12)
    /// (Core 5.4 Vol 4 Part E 7.8.1). Extended reports are enabled because some controllers (Bumble's
    /// virtual one) answer even a legacy scan with them.
    public static let leEvents: UInt64 = 0x0000_0000_0000_1A6F
}

extension BringUpStep {
    /// The step after `self`, given what is known so far; nil when bring-up is complete.
    func next(_ info: ControllerInfo, _ configuration: HostConfiguration) -> BringUpStep? {
        switch self {
        case .reset: return .readLocalVersion
        case .readLocalVersion: return .readLocalSupportedCommands
        case .readLocalSupportedCommands: return .readLocalSupportedFeatures
        case .readLocalSupportedFeatures: return .setEventMask
        case .setEventMask: return .leSetEventMask
        case .leSetEventMask:
            // Octet 41 bit 5: LE Read Buffer Size v2 (adds the ISO pool; same ACL figures).
            return info.supportedCommands?.supports(octet: 41, bit: 5) == true ? .leReadBufferSizeV2 : .leReadBufferSize
        case .leReadBufferSizeV2, .leReadBufferSize:
            return info.aclDataPacketLength == 0 ? .readBufferSize : .leReadLocalSupportedFeatures
        case .readBufferSize: return .leReadLocalSupportedFeatures
        case .leReadLocalSupportedFeatures:
            // Octet 15 bit 1: Read BD_ADDR.
            if info.supports(octet: 15, bit: 1) { return .readBDADDR }
            return BringUpStep.readBDADDR.next(info, configuration)
        case .readBDADDR:
            // Octet 35 bit 3: LE Read Maximum Data Length (data length extension, Core 4.2+).
            if info.supportedCommands?.supports(octet: 35, bit: 3) == true { return .leReadMaximumDataLength }
            return BringUpStep.leWriteSuggestedDefaultDataLength.next(info, configuration)
        case .leReadMaximumDataLength:
            // Octet 34 bit 0: LE Write Suggested Default Data Length.
            if info.supportedCommands?.supports(octet: 34, bit: 0) == true, configuration.suggestedDataLength != nil {
                return .leWriteSuggestedDefaultDataLength
            }
            return BringUpStep.leWriteSuggestedDefaultDataLength.next(info, configuration)
        case .leWriteSuggestedDefaultDataLength:
            if info.speaksZephyrVendorCommands { return .zephyrReadVersionInformation }
            return Self.addressStep(info)
        case .zephyrReadVersionInformation: return .zephyrReadSupportedCommands
        case .zephyrReadSupportedCommands:
            if info.zephyrCommands?.readStaticAddresses == true { return .zephyrReadStaticAddresses }
            return Self.addressStep(info)
        case .zephyrReadStaticAddresses: return Self.addressStep(info)
        case .leSetRandomAddress: return nil
        }
    }

    /// A controller with a public address needs no random one; any other needs LE Set Random Address,
    /// after every Reset, because Reset clears it (Zephyr does; Core 5.4 Vol 4 Part E 7.3.2 allows it).
    static func addressStep(_ info: ControllerInfo) -> BringUpStep? {
        info.addressSource == .publicAddress ? nil : .leSetRandomAddress
    }

    /// Steps whose failure ends bring-up; the rest are informational and skipped when refused.
    var isEssential: Bool {
        switch self {
        case .reset, .readLocalVersion, .setEventMask, .leSetEventMask, .leReadBufferSize,
            .leReadBufferSizeV2, .readBufferSize, .leSetRandomAddress:
            return true
        default:
            return false
        }
    }

    var isVendorCommand: Bool {
        switch self {
        case .zephyrReadVersionInformation, .zephyrReadSupportedCommands, .zephyrReadStaticAddresses: return true
        default: return false
        }
    }
}
