// Commands outside the LE group: Link Control (OGF 0x01), Controller & Baseband (0x03),
// Informational (0x04) and Status (0x05) parameters, Core 5.4 Vol 4 Part E 7.1-7.5.
//
// Return parameters are parsed strictly: a fixed-size block with extra bytes is `trailingBytes`,
// so a controller that answers a different command under the same opcode is noticed, not misread.

// MARK: - Link Control

/// Disconnect (Core 5.4 Vol 4 Part E 7.1.6). Completes with Command Status, then a
/// Disconnection Complete event.
public struct HCIDisconnect: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x01, ocf: 0x0006)
    public var handle: UInt16
    /// One of the error codes the specification allows here; 0x13 Remote User Terminated is usual.
    public var reason: HCIStatus

    public init(handle: UInt16, reason: HCIStatus = .remoteUserTerminated) {
        self.handle = handle
        self.reason = reason
    }

    public func writeParameters<S: ByteSink>(to sink: inout S) {
        sink.append(u16: handle)
        sink.append(reason.rawValue)
    }
}

// MARK: - Controller & Baseband

/// Reset (Core 5.4 Vol 4 Part E 7.3.2).
public struct HCIReset: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x03, ocf: 0x0003)
    public init() {}
    public func writeParameters<S: ByteSink>(to sink: inout S) {}
}

/// Set Event Mask (Core 5.4 Vol 4 Part E 7.3.1): which page-0 events the controller may send.
public struct HCISetEventMask: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x03, ocf: 0x0001)
    public var mask: UInt64

    public init(mask: UInt64) { self.mask = mask }

    /// Bit numbers of the events a BLE-only host needs (Core 5.4 Vol 4 Part E 7.3.1 table).
    public enum Bit {
        public static let disconnectionComplete: UInt64 = 1 &<< 4
        public static let encryptionChange: UInt64 = 1 &<< 7
        public static let readRemoteVersionInformationComplete: UInt64 = 1 &<< 11
        public static let hardwareError: UInt64 = 1 &<< 15
        public static let dataBufferOverflow: UInt64 = 1 &<< 25
        public static let encryptionKeyRefreshComplete: UInt64 = 1 &<< 47
        public static let leMeta: UInt64 = 1 &<< 61
    }

    /// Everything an LE host handles; the rest stays masked so BR/EDR noise never arrives.
    public static let leHostDefault = HCISetEventMask(
        mask: Bit.disconnectionComplete | Bit.encryptionChange | Bit.readRemoteVersionInformationComplete
            | Bit.hardwareError | Bit.dataBufferOverflow | Bit.encryptionKeyRefreshComplete | Bit.leMeta)

    public func writeParameters<S: ByteSink>(to sink: inout S) { sink.append(u64: mask) }
}

// MARK: - Informational parameters

/// Read Local Version Information (Core 5.4 Vol 4 Part E 7.4.1).
public struct HCIReadLocalVersionInformation: HCICommand, Equatable, Sendable {
    public typealias ReturnParameters = HCILocalVersionInformation
    public static let opcode = HCIOpcode(ogf: 0x04, ocf: 0x0001)
    public init() {}
    public func writeParameters<S: ByteSink>(to sink: inout S) {}
}

/// What Read Local Version Information returns. Version numbers are the assigned numbers
/// (0x0D = 5.4); `manufacturer` is a company identifier (0x0059 Nordic, 0x05F1 Linux Foundation/Zephyr).
public struct HCILocalVersionInformation: HCIReturnParameters, Equatable, Sendable {
    public var hciVersion: UInt8
    public var hciRevision: UInt16
    public var lmpVersion: UInt8
    public var manufacturer: UInt16
    public var lmpSubversion: UInt16

    public init(hciVersion: UInt8, hciRevision: UInt16, lmpVersion: UInt8, manufacturer: UInt16, lmpSubversion: UInt16) {
        self.hciVersion = hciVersion
        self.hciRevision = hciRevision
        self.lmpVersion = lmpVersion
        self.manufacturer = manufacturer
        self.lmpSubversion = lmpSubversion
    }

    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(parameters, exactly: 8)
        hciVersion = try r.u8()
        hciRevision = try r.u16()
        lmpVersion = try r.u8()
        manufacturer = try r.u16()
        lmpSubversion = try r.u16()
        try r.expectEnd()
    }
}

/// Read Local Supported Commands (Core 5.4 Vol 4 Part E 7.4.2).
public struct HCIReadLocalSupportedCommands: HCICommand, Equatable, Sendable {
    public typealias ReturnParameters = HCISupportedCommands
    public static let opcode = HCIOpcode(ogf: 0x04, ocf: 0x0002)
    public init() {}
    public func writeParameters<S: ByteSink>(to sink: inout S) {}
}

/// The 64-octet Supported_Commands bitmap (Core 5.4 Vol 4 Part E 6.27): octet N bit B is one command.
public struct HCISupportedCommands: HCIReturnParameters, Equatable, Sendable {
    public var octets: InlineArray<64, UInt8>

    public init(octets: InlineArray<64, UInt8>) { self.octets = octets }

    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        guard parameters.count == 64 else {
            throw .badLength(field: "Supported_Commands", declared: parameters.count, limit: 64)
        }
        octets = InlineArray(repeating: 0)
        for i in 0..<64 { octets[i] = parameters[i] }
    }

    /// False for an octet or bit outside the bitmap rather than trapping.
    public func supports(octet: Int, bit: Int) -> Bool {
        guard octet >= 0, octet < 64, bit >= 0, bit < 8 else { return false }
        return octets[octet] & (1 &<< UInt8(bit)) != 0
    }

    // A few positions from the table in Core 5.4 Vol 4 Part E 6.27 that bring-up branches on.
    public var leReadBufferSizeV2: Bool { supports(octet: 41, bit: 5) }
    public var leSetDataLength: Bool { supports(octet: 33, bit: 6) }
    public var leReadMaximumDataLength: Bool { supports(octet: 35, bit: 3) }
    public var leEncrypt: Bool { supports(octet: 27, bit: 6) }
    public var leRand: Bool { supports(octet: 27, bit: 7) }

    public static func == (a: HCISupportedCommands, b: HCISupportedCommands) -> Bool {
        for i in 0..<64 where a.octets[i] != b.octets[i] { return false }
        return true
    }
}

/// Read Local Supported Features (Core 5.4 Vol 4 Part E 7.4.3): the LMP features page 0.
public struct HCIReadLocalSupportedFeatures: HCICommand, Equatable, Sendable {
    public typealias ReturnParameters = HCILMPFeatures
    public static let opcode = HCIOpcode(ogf: 0x04, ocf: 0x0003)
    public init() {}
    public func writeParameters<S: ByteSink>(to sink: inout S) {}
}

/// LMP features page 0 as a 64-bit little-endian mask (Core 5.4 Vol 2 Part C 3.3).
public struct HCILMPFeatures: HCIReturnParameters, Equatable, Sendable {
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

    /// Bit 37, "BR/EDR Not Supported".
    public var brEDRNotSupported: Bool { contains(bit: 37) }
    /// Bit 38, "LE Supported (Controller)": a controller without it cannot run this host.
    public var leSupported: Bool { contains(bit: 38) }
}

/// Read Buffer Size (Core 5.4 Vol 4 Part E 7.4.5): the shared ACL buffers, used when the LE
/// variant reports zero (Core 5.4 Vol 4 Part E 7.8.2).
public struct HCIReadBufferSize: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x04, ocf: 0x0005)
    public init() {}
    public func writeParameters<S: ByteSink>(to sink: inout S) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable, Sendable {
        public var aclDataPacketLength: UInt16
        public var syncDataPacketLength: UInt8
        public var totalNumACLDataPackets: UInt16
        public var totalNumSyncDataPackets: UInt16

        public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
            var r = try ByteReader(parameters, exactly: 7)
            aclDataPacketLength = try r.u16()
            syncDataPacketLength = try r.u8()
            totalNumACLDataPackets = try r.u16()
            totalNumSyncDataPackets = try r.u16()
            try r.expectEnd()
        }
    }
}

/// Read BD_ADDR (Core 5.4 Vol 4 Part E 7.4.6): the public address (all zeros if the controller has
/// none, as Bumble's virtual controller and blank nRF parts report).
public struct HCIReadBDADDR: HCICommand, Equatable, Sendable {
    public typealias ReturnParameters = BDAddress
    public static let opcode = HCIOpcode(ogf: 0x04, ocf: 0x0009)
    public init() {}
    public func writeParameters<S: ByteSink>(to sink: inout S) {}
}

extension BDAddress: HCIReturnParameters {
    /// Exactly six octets, wire order.
    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(parameters, exactly: 6)
        self = try BDAddress.read(&r)
        try r.expectEnd()
    }
}

// MARK: - Status parameters

/// Read RSSI (Core 5.4 Vol 4 Part E 7.5.4): for LE, the received signal strength in dBm.
public struct HCIReadRSSI: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x05, ocf: 0x0005)
    public var handle: UInt16
    public init(handle: UInt16) { self.handle = handle }
    public func writeParameters<S: ByteSink>(to sink: inout S) { sink.append(u16: handle) }

    public struct ReturnParameters: HCIReturnParameters, Equatable, Sendable {
        public var handle: UInt16
        public var rssi: Int8

        public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
            var r = try ByteReader(parameters, exactly: 3)
            handle = try r.u16()
            rssi = try r.i8()
            try r.expectEnd()
        }
    }
}
