/// The controller bring-up sequence, one step per command, in the order they are sent.
///
/// It is a straight line with a few skips decided from what earlier steps learned (supported
/// commands, manufacturer): the cases are declared in the order they are sent, and `isWanted` says
/// which are skipped, so reading the two top to bottom tells the whole story.
public enum BringUpStep: UInt8, Equatable, Sendable {
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
    /// Only when the controller has LE 2M PHY: links prefer it (see `HCILESetDefaultPHY`).
    case leSetDefaultPHY
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
    /// The step after `self`, given what is known so far; nil when bring-up is complete: the first
    /// later step (in declaration order) that `isWanted`.
    ///
    /// A scan of one table rather than a hand-written successor per step: the successors repeated
    /// the same conditions (which skip to where), and the firmware image carried each copy.
    func next(_ info: ControllerInfo, _ configuration: HostConfiguration) -> BringUpStep? {
        var raw = rawValue
        while let step = BringUpStep(rawValue: raw &+ 1) {
            if step.isWanted(info, configuration) { return step }
            raw &+= 1
        }
        return nil
    }

    /// Whether bring-up sends this step once the steps before it are done.
    func isWanted(_ info: ControllerInfo, _ configuration: HostConfiguration) -> Bool {
        switch self {
        // Octet 41 bit 5: LE Read Buffer Size v2 (adds the ISO pool; same ACL figures).
        case .leReadBufferSizeV2: return info.lists(octet: 41, bit: 5)
        case .leReadBufferSize: return !info.lists(octet: 41, bit: 5)
        // Only when the LE pool is absent (LE ACL length 0).
        case .readBufferSize: return info.aclDataPacketLength == 0
        // Octet 15 bit 1: Read BD_ADDR (assumed without the bitmap).
        case .readBDADDR: return info.supports(octet: 15, bit: 1)
        // Octet 35 bit 3: LE Read Maximum Data Length (data length extension, Core 4.2+).
        case .leReadMaximumDataLength: return info.lists(octet: 35, bit: 3)
        // Octet 34 bit 0: LE Write Suggested Default Data Length; asked only with the maximum known.
        case .leWriteSuggestedDefaultDataLength:
            return info.lists(octet: 35, bit: 3) && info.lists(octet: 34, bit: 0) && configuration.suggestedDataLength != nil
        // Octet 35 bit 5: LE Set Default PHY, with the LE 2M PHY feature (Vol 6 Part B 4.6, bit 8).
        case .leSetDefaultPHY:
            return info.leFeatures?.le2MPHY == true && info.lists(octet: 35, bit: 5) && configuration.prefers2MPHY
        case .zephyrReadVersionInformation, .zephyrReadSupportedCommands: return info.speaksZephyrVendorCommands
        case .zephyrReadStaticAddresses:
            return info.speaksZephyrVendorCommands && info.listsZephyrReadStaticAddresses
        // A controller with a public address needs no random one; any other needs LE Set Random
        // Address, after every Reset, because Reset clears it (Zephyr does; Core 5.4 Vol 4 Part E
        // 7.3.2 allows it).
        case .leSetRandomAddress: return info.addressSource != .publicAddress
        default: return true
        }
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
