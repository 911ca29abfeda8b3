/// Where the identity address in use came from.
public enum AddressSource: Equatable, Sendable {
    /// The controller's public BD_ADDR (non-zero).
    case publicAddress
    /// A static random address the controller stores in its factory info (Zephyr vendor 0xFC09;
    /// on nRF52 it comes from the FICR DEVICEADDR registers).
    case zephyrStatic
    /// A static random address the host generated from the runtime's random bytes.
    case generatedStatic
}

/// What bring-up learned about the controller; `herald info` prints it.
public struct ControllerInfo: Sendable {
    public var localVersion: HCILocalVersionInformation?
    /// Read Local Supported Commands' bitmap; nil until read (or when it was refused).
    public var supportedCommands: HCISupportedCommands? {
        get { hasSupportedCommands ? supportedCommandsBitmap : nil }
        set {
            hasSupportedCommands = false
            if let newValue { supportedCommandsBitmap = newValue; hasSupportedCommands = true }
        }
    }
    public var lmpFeatures: HCILMPFeatures?
    public var leFeatures: LEFeatures?
    /// Host→controller LE ACL buffers: payload length per packet and how many the controller holds.
    public var aclDataPacketLength: UInt16 = 0
    public var aclDataPacketCount: UInt16 = 0
    /// Whether the buffer figures came from the shared (BR/EDR) pool because the LE pool was absent.
    public var aclBuffersShared = false
    public var publicAddress: BDAddress?
    public var maximumDataLength: HCILEReadMaximumDataLength.ReturnParameters?
    /// LE Set Default PHY was accepted with 1M or 2M for both directions: links made from now on
    /// prefer the LE 2M PHY (bring-up sends it only when the controller has the 2M feature).
    public var prefers2MPHY = false
    public var zephyrVersion: ZephyrReadVersionInformation.ReturnParameters?
    /// Whether Zephyr Read Supported Commands listed Read Static Addresses: all bring-up reads of
    /// that 64-octet bitmap, so all that is kept of it (64 octets less in every image's value).
    public internal(set) var listsZephyrReadStaticAddresses = false
    /// The address we advertise and connect with, its HCI type, and its origin.
    public var address: BDAddress = .zero
    public var addressType: AddressType = .randomDevice
    public var addressSource: AddressSource = .generatedStatic

    // The 64-octet bitmap is kept as a value and a flag, not as an optional: an optional of 64
    // octets has no spare bit, so its tag is a 65th octet, and Swift 6.3 reads that tag through an
    // outlined function that takes the whole optional by value (17 words loaded and put on the stack
    // at every test). Bring-up tests the bitmaps seven times in one function (`BringUpStep.isWanted`
    // and the ready path inlined into `HCIHost.advance`); on Armv6-M, which has no unaligned loads,
    // each of those words is four byte loads. With a flag, a test is one byte load and one bit.
    var supportedCommandsBitmap = HCISupportedCommands(octets: InlineArray(repeating: 0))
    var hasSupportedCommands = false

    /// Out of line: a controller's bring-up starts from it at boot and after each failure, and
    /// inlined, each place wrote its two 64-octet bitmaps and dozen optionals field by field.
    @inline(never)
    public init() {}

    /// Whether the controller claims support for a command (Core 5.4 Vol 4 Part E 6.27). Without the
    /// bitmap (Read Local Supported Commands failed) the host assumes the Core 4.2 baseline.
    public func supports(octet: Int, bit: Int) -> Bool {
        !hasSupportedCommands || supportedCommandsBitmap.supports(octet: octet, bit: bit)
    }

    /// Whether the controller's bitmap lists a command; false without the bitmap (unlike `supports`).
    func lists(octet: Int, bit: Int) -> Bool {
        hasSupportedCommands && supportedCommandsBitmap.supports(octet: octet, bit: bit)
    }

    /// Controllers whose link layer is Zephyr's, and so understand Zephyr's vendor commands:
    /// Nordic Semiconductor (0x0059) and The Linux Foundation (0x05F1), per the Bluetooth SIG
    /// company identifiers. Others may give 0xFCxx a different meaning, or never answer.
    public var speaksZephyrVendorCommands: Bool {
        guard let m = localVersion?.manufacturer else { return false }
        return m == 0x0059 || m == 0x05F1
    }
}

/// Why the controller is considered failed; the runtime resets it and runs bring-up again.
public enum ControllerFailure: Equatable, Sendable {
    /// HCI Reset was sent `resets` times and never answered.
    case noResponse(resets: Int)
    /// Hardware Error event (Core 5.4 Vol 4 Part E 7.7.16).
    case hardwareError(code: UInt8)
    /// Zephyr's controller reported an assert or fatal error through a vendor event.
    case controllerAssert
    /// A command went unanswered past its timeout.
    case commandTimeout(HCIOpcode)
    /// A command bring-up cannot do without was refused.
    case commandFailed(HCIOpcode, HCIStatus)
    /// A Command Complete whose return parameters did not parse.
    case malformedResponse(HCIOpcode)
}
