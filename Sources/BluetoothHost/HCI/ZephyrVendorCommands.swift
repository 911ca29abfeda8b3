// Zephyr's vendor-specific HCI commands (OGF 0x3F), as Zephyr's controller and hci_uart sample
// implement them (layouts from Zephyr's public hci_vs.h; facts only).
//
// OGF 0x3F means something different for every manufacturer, so a reply is trusted only if its
// length is exactly what Zephyr sends: another vendor's 0xFC01 reply must be a decode error,
// never a misread version.

/// Zephyr Read Version Information (0xFC01): which hardware and firmware the controller is.
public struct ZephyrReadVersionInformation: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x3F, ocf: 0x0001)
    public init() {}
    public func writeParameters<S: ByteSink>(to sink: inout S) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable, Sendable {
        /// 0x0001 Intel, 0x0002 Nordic, 0x0003 NXP, 0x0004 Espressif.
        public var hardwarePlatform: UInt16
        /// For Nordic: 0x0001 nRF51x, 0x0002 nRF52x, 0x0003 nRF53x, 0x0004 nRF54Hx, 0x0005 nRF54Lx.
        public var hardwareVariant: UInt16
        /// 0x01 standard controller, 0x02 vendor-specific controller, 0x03 loader, 0x04 rescue image.
        public var firmwareVariant: UInt8
        public var firmwareVersion: UInt8
        public var firmwareRevision: UInt16
        public var firmwareBuild: UInt32

        public static let nordicPlatform: UInt16 = 0x0002
        public static let nrf52Variant: UInt16 = 0x0002

        public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
            guard parameters.count == 12 else {
                throw .badLength(field: "Zephyr version information", declared: parameters.count, limit: 12)
            }
            var r = ByteReader(parameters)
            hardwarePlatform = try r.u16()
            hardwareVariant = try r.u16()
            firmwareVariant = try r.u8()
            firmwareVersion = try r.u8()
            firmwareRevision = try r.u16()
            firmwareBuild = try r.u32()
        }
    }
}

/// Zephyr Read Supported Commands (0xFC02): a 64-octet bitmap of the vendor commands, bit n of
/// the little-endian bitmap being vendor command n (Zephyr's BT_VS_CMD_BIT_*).
public struct ZephyrReadSupportedCommands: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x3F, ocf: 0x0002)
    public init() {}
    public func writeParameters<S: ByteSink>(to sink: inout S) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable, Sendable {
        public var octets: InlineArray<64, UInt8>

        public init(octets: InlineArray<64, UInt8>) { self.octets = octets }

        public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
            guard parameters.count == 64 else {
                throw .badLength(field: "Zephyr supported commands", declared: parameters.count, limit: 64)
            }
            octets = InlineArray(repeating: 0)
            for i in 0..<64 { octets[i] = parameters[i] }
        }

        public func supports(octet: Int, bit: Int) -> Bool {
            guard octet >= 0, octet < 64, bit >= 0, bit < 8 else { return false }
            return octets[octet] & (1 &<< UInt8(bit)) != 0
        }

        private func supports(command n: Int) -> Bool { supports(octet: n / 8, bit: n % 8) }

        public var readVersionInformation: Bool { supports(command: 0) }
        public var readSupportedCommands: Bool { supports(command: 1) }
        public var writeBDADDR: Bool { supports(command: 5) }
        public var readStaticAddresses: Bool { supports(command: 8) }
        public var writeTxPower: Bool { supports(command: 13) }
        public var readTxPower: Bool { supports(command: 14) }

        public static func == (a: ReturnParameters, b: ReturnParameters) -> Bool {
            for i in 0..<64 where a.octets[i] != b.octets[i] { return false }
            return true
        }
    }
}

/// Zephyr Write BD_ADDR (0xFC06): sets the public address (takes effect for new activity).
public struct ZephyrWriteBDADDR: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x3F, ocf: 0x0006)
    public var address: BDAddress
    public init(address: BDAddress) { self.address = address }
    public func writeParameters<S: ByteSink>(to sink: inout S) { address.write(to: &sink) }
}

/// One entry of Zephyr Read Static Addresses: a static random address burnt into the chip (on
/// nRF, from FICR) and the identity root it was derived with (all zero if there is none).
public struct ZephyrStaticAddress: Equatable, Sendable {
    public var address: BDAddress
    public var identityRoot: InlineArray<16, UInt8>

    public init(address: BDAddress, identityRoot: InlineArray<16, UInt8>) {
        self.address = address
        self.identityRoot = identityRoot
    }

    public static func == (a: ZephyrStaticAddress, b: ZephyrStaticAddress) -> Bool {
        guard a.address == b.address else { return false }
        for i in 0..<16 where a.identityRoot[i] != b.identityRoot[i] { return false }
        return true
    }
}

/// Zephyr Read Static Addresses (0xFC09): count, then count × (6-octet address, 16-octet IR).
public struct ZephyrReadStaticAddresses: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x3F, ocf: 0x0009)
    public init() {}
    public func writeParameters<S: ByteSink>(to sink: inout S) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable, Sendable {
        /// How many entries are kept; nRF parts report one.
        public static let capacity = 4
        /// How many the controller reported (may exceed `capacity`; only the first are kept).
        public private(set) var count: Int
        var storage: InlineArray<4, ZephyrStaticAddress>

        public var storedCount: Int { min(count, Self.capacity) }

        /// The first address, which is the one a host uses as its identity.
        public var first: ZephyrStaticAddress? { count > 0 ? storage[0] : nil }

        public subscript(i: Int) -> ZephyrStaticAddress {
            precondition(i >= 0 && i < storedCount, "static address index out of range")
            return storage[i]
        }

        public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
            var r = ByteReader(parameters)
            count = Int(try r.u8())
            let expected = 1 + count * 22
            guard parameters.count == expected else {
                throw .badLength(field: "Zephyr static addresses", declared: parameters.count, limit: expected)
            }
            storage = InlineArray(repeating: ZephyrStaticAddress(address: .zero, identityRoot: InlineArray(repeating: 0)))
            for i in 0..<count {
                let address = try BDAddress.read(&r)
                var ir = InlineArray<16, UInt8>(repeating: 0)
                for j in 0..<16 { ir[j] = try r.u8() }
                if i < Self.capacity { storage[i] = ZephyrStaticAddress(address: address, identityRoot: ir) }
            }
        }

        /// The first address alone, the one bring-up keeps, with the same checks as
        /// `init(parsing:)` (a count, then exactly 22 octets per entry); nil when there is none.
        /// Bring-up uses this: building the four-entry table (identity roots included) only to read
        /// its first address cost a firmware image about 300 octets of code.
        public static func firstAddress(parsing parameters: Span<UInt8>) throws(DecodeError) -> BDAddress? {
            var r = ByteReader(parameters)
            let count = Int(try r.u8())
            let expected = 1 + count * 22
            guard parameters.count == expected else {
                throw .badLength(field: "Zephyr static addresses", declared: parameters.count, limit: expected)
            }
            return count > 0 ? try BDAddress.read(&r) : nil
        }

        public static func == (a: ReturnParameters, b: ReturnParameters) -> Bool {
            guard a.count == b.count else { return false }
            for i in 0..<a.storedCount where a.storage[i] != b.storage[i] { return false }
            return true
        }
    }
}

/// What a Zephyr Tx power handle refers to.
public enum ZephyrTxPowerHandleType: UInt8, Sendable, Equatable {
    case advertising = 0x00
    case scanning = 0x01
    case connection = 0x02
}

/// The reply of both Zephyr Tx power commands: the handle echoed and the level in dBm.
public struct ZephyrTxPowerLevel: HCIReturnParameters, Equatable, Sendable {
    public var handleType: ZephyrTxPowerHandleType
    public var handle: UInt16
    public var txPowerLevel: Int8

    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        guard parameters.count == 4 else {
            throw .badLength(field: "Zephyr Tx power", declared: parameters.count, limit: 4)
        }
        var r = ByteReader(parameters)
        let type = try r.u8()
        guard let t = ZephyrTxPowerHandleType(rawValue: type) else {
            throw .invalidValue(field: "Zephyr Tx power handle type", value: Int(type))
        }
        handleType = t
        handle = try r.u16()
        txPowerLevel = try r.i8()
    }
}

/// Zephyr Write Tx Power Level (0xFC0E). The controller picks the nearest level it supports and
/// returns it; 0x7F means "no preference" (its default).
public struct ZephyrWriteTxPower: HCICommand, Equatable, Sendable {
    public typealias ReturnParameters = ZephyrTxPowerLevel
    public static let opcode = HCIOpcode(ogf: 0x3F, ocf: 0x000E)
    public var handleType: ZephyrTxPowerHandleType
    /// Advertising set or connection handle; 0 for the legacy advertiser and the scanner.
    public var handle: UInt16
    public var txPowerLevel: Int8

    public init(handleType: ZephyrTxPowerHandleType, handle: UInt16 = 0, txPowerLevel: Int8) {
        self.handleType = handleType
        self.handle = handle
        self.txPowerLevel = txPowerLevel
    }

    public func writeParameters<S: ByteSink>(to sink: inout S) {
        sink.append(handleType.rawValue)
        sink.append(u16: handle)
        sink.append(i8: txPowerLevel)
    }
}

/// Zephyr Read Tx Power Level (0xFC0F).
public struct ZephyrReadTxPower: HCICommand, Equatable, Sendable {
    public typealias ReturnParameters = ZephyrTxPowerLevel
    public static let opcode = HCIOpcode(ogf: 0x3F, ocf: 0x000F)
    public var handleType: ZephyrTxPowerHandleType
    public var handle: UInt16

    public init(handleType: ZephyrTxPowerHandleType, handle: UInt16 = 0) {
        self.handleType = handleType
        self.handle = handle
    }

    public func writeParameters<S: ByteSink>(to sink: inout S) {
        sink.append(handleType.rawValue)
        sink.append(u16: handle)
    }
}
