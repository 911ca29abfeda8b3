// LE Controller commands (OGF 0x08) about the controller itself, addresses, data length,
// cryptography and connections, Core 5.4 Vol 4 Part E 7.8.
// Advertising and scanning commands live in HCILEAdvertisingCommands.swift.

/// LE Set Event Mask (Core 5.4 Vol 4 Part E 7.8.1): which LE Meta subevents the controller may send.
public struct HCILESetEventMask: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x0001)
    public var mask: UInt64
    public init(mask: UInt64) { self.mask = mask }

    /// Bit n enables subevent n + 1 (Core 5.4 Vol 4 Part E 7.8.1 table).
    public static func bit(forSubevent code: UInt8) -> UInt64 {
        guard code >= 1, code <= 64 else { return 0 }
        return 1 &<< UInt64(widening: code - 1)
    }

    /// The subevents this host acts on: connections, legacy and extended reports, connection update,
    /// data length change, enhanced connection complete (v1 and v2), advertising set terminated.
    public static let hostDefault = HCILESetEventMask(
        mask: bit(forSubevent: HCILESubeventCode.connectionComplete)
            | bit(forSubevent: HCILESubeventCode.advertisingReport)
            | bit(forSubevent: HCILESubeventCode.connectionUpdateComplete)
            | bit(forSubevent: HCILESubeventCode.dataLengthChange)
            | bit(forSubevent: HCILESubeventCode.enhancedConnectionCompleteV1)
            | bit(forSubevent: HCILESubeventCode.extendedAdvertisingReport)
            | bit(forSubevent: HCILESubeventCode.advertisingSetTerminated)
            | bit(forSubevent: HCILESubeventCode.enhancedConnectionCompleteV2))

    public func writeParameters<S: ByteSink>(to sink: inout S) { sink.append(u64: mask) }
}

/// LE Read Buffer Size [v1] (Core 5.4 Vol 4 Part E 7.8.2). A zero length means "use Read Buffer Size".
public struct HCILEReadBufferSize: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x0002)
    public init() {}
    public func writeParameters<S: ByteSink>(to sink: inout S) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable, Sendable {
        public var leACLDataPacketLength: UInt16
        public var totalNumLEACLDataPackets: UInt8

        public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
            var r = try ByteReader(parameters, exactly: 3)
            leACLDataPacketLength = try r.u16()
            totalNumLEACLDataPackets = try r.u8()
            try r.expectEnd()
        }
    }
}

/// LE Read Buffer Size [v2] (Core 5.4 Vol 4 Part E 7.8.2): adds the ISO buffers.
public struct HCILEReadBufferSizeV2: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x0060)
    public init() {}
    public func writeParameters<S: ByteSink>(to sink: inout S) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable, Sendable {
        public var leACLDataPacketLength: UInt16
        public var totalNumLEACLDataPackets: UInt8
        public var isoDataPacketLength: UInt16
        public var totalNumISODataPackets: UInt8

        public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
            var r = try ByteReader(parameters, exactly: 6)
            leACLDataPacketLength = try r.u16()
            totalNumLEACLDataPackets = try r.u8()
            isoDataPacketLength = try r.u16()
            totalNumISODataPackets = try r.u8()
            try r.expectEnd()
        }
    }
}

/// LE Read Local Supported Features (Core 5.4 Vol 4 Part E 7.8.3).
public struct HCILEReadLocalSupportedFeatures: HCICommand, Equatable, Sendable {
    public typealias ReturnParameters = LEFeatures
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x0003)
    public init() {}
    public func writeParameters<S: ByteSink>(to sink: inout S) {}
}

/// LE Set Random Address (Core 5.4 Vol 4 Part E 7.8.4).
public struct HCILESetRandomAddress: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x0005)
    public var address: BDAddress
    public init(address: BDAddress) { self.address = address }
    public func writeParameters<S: ByteSink>(to sink: inout S) { address.write(to: &sink) }
}

/// LE Encrypt (Core 5.4 Vol 4 Part E 7.8.22): AES-128 in the controller, which is how a host
/// without its own AES computes `ah` for resolvable private addresses (Core 5.4 Vol 3 Part H 2.2.2).
///
/// Key, plaintext and result are in HCI order: least significant octet first, i.e. the reverse of
/// the FIPS-197 byte order the security functions are written in.
public struct HCILEEncrypt: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x0017)
    public var key: InlineArray<16, UInt8>
    public var plaintext: InlineArray<16, UInt8>

    public init(key: InlineArray<16, UInt8>, plaintext: InlineArray<16, UInt8>) {
        self.key = key
        self.plaintext = plaintext
    }

    public func writeParameters<S: ByteSink>(to sink: inout S) {
        for i in 0..<16 { sink.append(key[i]) }
        for i in 0..<16 { sink.append(plaintext[i]) }
    }

    public static func == (a: HCILEEncrypt, b: HCILEEncrypt) -> Bool {
        for i in 0..<16 where a.key[i] != b.key[i] || a.plaintext[i] != b.plaintext[i] { return false }
        return true
    }

    public struct ReturnParameters: HCIReturnParameters, Equatable, Sendable {
        /// Least significant octet first, like the inputs.
        public var encryptedData: InlineArray<16, UInt8>

        public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
            guard parameters.count == 16 else {
                throw .badLength(field: "Encrypted_Data", declared: parameters.count, limit: 16)
            }
            encryptedData = InlineArray(repeating: 0)
            for i in 0..<16 { encryptedData[i] = parameters[i] }
        }

        public static func == (a: ReturnParameters, b: ReturnParameters) -> Bool {
            for i in 0..<16 where a.encryptedData[i] != b.encryptedData[i] { return false }
            return true
        }
    }
}

/// LE Rand (Core 5.4 Vol 4 Part E 7.8.23): 8 random octets from the controller's generator.
public struct HCILERand: HCICommand, Equatable, Sendable {
    public typealias ReturnParameters = UInt64
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x0018)
    public init() {}
    public func writeParameters<S: ByteSink>(to sink: inout S) {}
}

extension UInt64: HCIReturnParameters {
    /// Exactly eight octets, little-endian (LE Rand's Random_Number).
    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(parameters, exactly: 8)
        self = try r.u64()
        try r.expectEnd()
    }
}

/// LE Connection Update (Core 5.4 Vol 4 Part E 7.8.18). Completes with Command Status, then
/// LE Connection Update Complete. Intervals in 1.25 ms, timeout in 10 ms, CE lengths in 0.625 ms.
public struct HCILEConnectionUpdate: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x0013)
    public var handle: UInt16
    public var connectionIntervalMin: UInt16
    public var connectionIntervalMax: UInt16
    public var maxLatency: UInt16
    public var supervisionTimeout: UInt16
    public var minCELength: UInt16
    public var maxCELength: UInt16

    public init(
        handle: UInt16, connectionIntervalMin: UInt16, connectionIntervalMax: UInt16, maxLatency: UInt16 = 0,
        supervisionTimeout: UInt16, minCELength: UInt16 = 0, maxCELength: UInt16 = 0
    ) {
        self.handle = handle
        self.connectionIntervalMin = connectionIntervalMin
        self.connectionIntervalMax = connectionIntervalMax
        self.maxLatency = maxLatency
        self.supervisionTimeout = supervisionTimeout
        self.minCELength = minCELength
        self.maxCELength = maxCELength
    }

    public func writeParameters<S: ByteSink>(to sink: inout S) {
        sink.append(u16: handle)
        sink.append(u16: connectionIntervalMin)
        sink.append(u16: connectionIntervalMax)
        sink.append(u16: maxLatency)
        sink.append(u16: supervisionTimeout)
        sink.append(u16: minCELength)
        sink.append(u16: maxCELength)
    }
}

/// LE Remote Connection Parameter Request Reply (Core 5.4 Vol 4 Part E 7.8.31): accepts the peer's
/// Connection Parameters Request with these values. Completes with Command Complete (handle).
public struct HCILERemoteConnectionParameterRequestReply: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x0020)
    public var handle: UInt16
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var maxLatency: UInt16
    public var timeout: UInt16

    /// The peer's own request, accepted as it stands.
    public init(accepting request: HCILERemoteConnectionParameterRequestEvent) {
        handle = request.handle
        intervalMin = request.intervalMin
        intervalMax = request.intervalMax
        maxLatency = request.maxLatency
        timeout = request.timeout
    }

    public func writeParameters<S: ByteSink>(to sink: inout S) {
        sink.append(u16: handle)
        sink.append(u16: intervalMin)
        sink.append(u16: intervalMax)
        sink.append(u16: maxLatency)
        sink.append(u16: timeout)
        sink.append(u16: 0)  // Min_CE_Length: no preference
        sink.append(u16: 0)  // Max_CE_Length
    }
}

/// LE Remote Connection Parameter Request Negative Reply (Core 5.4 Vol 4 Part E 7.8.32).
public struct HCILERemoteConnectionParameterRequestNegativeReply: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x0021)
    public var handle: UInt16
    public var reason: HCIStatus

    public init(handle: UInt16, reason: HCIStatus = .unacceptableConnectionParameters) {
        self.handle = handle
        self.reason = reason
    }

    public func writeParameters<S: ByteSink>(to sink: inout S) {
        sink.append(u16: handle)
        sink.append(reason.rawValue)
    }
}

/// LE Set Data Length (Core 5.4 Vol 4 Part E 7.8.33): asks the link layer for longer PDUs
/// (27...251 octets, 328...17040 µs).
public struct HCILESetDataLength: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x0022)
    public var handle: UInt16
    public var txOctets: UInt16
    public var txTime: UInt16

    public init(handle: UInt16, txOctets: UInt16 = 251, txTime: UInt16 = 2120) {
        self.handle = handle
        self.txOctets = txOctets
        self.txTime = txTime
    }

    public func writeParameters<S: ByteSink>(to sink: inout S) {
        sink.append(u16: handle)
        sink.append(u16: txOctets)
        sink.append(u16: txTime)
    }

    public struct ReturnParameters: HCIReturnParameters, Equatable, Sendable {
        public var handle: UInt16
        public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
            var r = try ByteReader(parameters, exactly: 2)
            handle = try r.u16()
            try r.expectEnd()
        }
    }
}

/// LE Read Suggested Default Data Length (Core 5.4 Vol 4 Part E 7.8.34).
public struct HCILEReadSuggestedDefaultDataLength: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x0023)
    public init() {}
    public func writeParameters<S: ByteSink>(to sink: inout S) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable, Sendable {
        public var suggestedMaxTxOctets: UInt16
        public var suggestedMaxTxTime: UInt16
        public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
            var r = try ByteReader(parameters, exactly: 4)
            suggestedMaxTxOctets = try r.u16()
            suggestedMaxTxTime = try r.u16()
            try r.expectEnd()
        }
    }
}

/// LE Write Suggested Default Data Length (Core 5.4 Vol 4 Part E 7.8.35): what new connections use.
public struct HCILEWriteSuggestedDefaultDataLength: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x0024)
    public var txOctets: UInt16
    public var txTime: UInt16

    public init(txOctets: UInt16, txTime: UInt16) {
        self.txOctets = txOctets
        self.txTime = txTime
    }

    public func writeParameters<S: ByteSink>(to sink: inout S) {
        sink.append(u16: txOctets)
        sink.append(u16: txTime)
    }
}

/// LE Read Maximum Data Length (Core 5.4 Vol 4 Part E 7.8.46).
public struct HCILEReadMaximumDataLength: HCICommand, Equatable, Sendable {
    public static let opcode = HCIOpcode(ogf: 0x08, ocf: 0x002F)
    public init() {}
    public func writeParameters<S: ByteSink>(to sink: inout S) {}

    public struct ReturnParameters: HCIReturnParameters, Equatable, Sendable {
        public var supportedMaxTxOctets: UInt16
        public var supportedMaxTxTime: UInt16
        public var supportedMaxRxOctets: UInt16
        public var supportedMaxRxTime: UInt16

        public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
            var r = try ByteReader(parameters, exactly: 8)
            supportedMaxTxOctets = try r.u16()
            supportedMaxTxTime = try r.u16()
            supportedMaxRxOctets = try r.u16()
            supportedMaxRxTime = try r.u16()
            try r.expectEnd()
        }
    }
}
