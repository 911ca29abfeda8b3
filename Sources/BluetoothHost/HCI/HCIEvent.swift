// HCI event packets and the controller-level events a BLE host handles
// (Core 5.4 Vol 4 Part E 5.4.4 for the packet, 7.7 for each event).
//
// Events are parsed as borrowed views over the received bytes: no copy, no allocation, and
// a view cannot outlive the buffer the transport owns. Fixed-size events reject extra bytes.

/// Event codes (Core 5.4 Vol 4 Part E 7.7), as constants so a `switch` on an unknown code still works.
public enum HCIEventCode {
    public static let disconnectionComplete: UInt8 = 0x05
    public static let encryptionChange: UInt8 = 0x08
    public static let readRemoteVersionInformationComplete: UInt8 = 0x0C
    public static let commandComplete: UInt8 = 0x0E
    public static let commandStatus: UInt8 = 0x0F
    public static let hardwareError: UInt8 = 0x10
    public static let numberOfCompletedPackets: UInt8 = 0x13
    public static let dataBufferOverflow: UInt8 = 0x1A
    public static let encryptionKeyRefreshComplete: UInt8 = 0x30
    public static let leMeta: UInt8 = 0x3E
    public static let vendorSpecific: UInt8 = 0xFF
}

/// LE Meta subevent codes (Core 5.4 Vol 4 Part E 7.7.65.x).
public enum HCILESubeventCode {
    public static let connectionComplete: UInt8 = 0x01
    public static let advertisingReport: UInt8 = 0x02
    public static let connectionUpdateComplete: UInt8 = 0x03
    public static let readRemoteFeaturesComplete: UInt8 = 0x04
    public static let longTermKeyRequest: UInt8 = 0x05
    public static let remoteConnectionParameterRequest: UInt8 = 0x06
    public static let dataLengthChange: UInt8 = 0x07
    public static let enhancedConnectionCompleteV1: UInt8 = 0x0A
    public static let phyUpdateComplete: UInt8 = 0x0C
    public static let extendedAdvertisingReport: UInt8 = 0x0D
    public static let scanTimeout: UInt8 = 0x11
    public static let advertisingSetTerminated: UInt8 = 0x12
    public static let channelSelectionAlgorithm: UInt8 = 0x14
    public static let enhancedConnectionCompleteV2: UInt8 = 0x29
}

/// One event packet without the H4 indicator: `[code][length][parameters]` (Core 5.4 Vol 4 Part E 5.4.4).
public struct HCIEventPacket: ~Escapable {
    public let code: UInt8
    public let parameters: Span<UInt8>

    /// The length octet must match the bytes present exactly: a short packet is `truncated`,
    /// a long one `trailingBytes` (the framer hands over exactly one packet).
    @_lifetime(copy bytes)
    public init(parsing bytes: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(bytes, atLeast: 2)
        code = try r.u8()
        let length = Int(try r.u8())
        guard r.remaining >= length else { throw .truncated(needed: 2 + length, available: bytes.count) }
        guard r.remaining == length else { throw .trailingBytes(count: r.remaining - length) }
        parameters = r.rest()
    }
}

/// Checks a packet carries the expected event before a typed parse.
@inline(__always)
func expectEventCode(_ code: UInt8, _ expected: UInt8) throws(DecodeError) {
    guard code == expected else { throw .unexpectedCode(field: "HCI event code", value: Int(code)) }
}

/// Why a command's Command Complete could not be turned into its return parameters.
public enum HCICommandError: Error, Equatable, Sendable {
    /// The controller answered with an error status.
    case failed(HCIStatus)
    /// Success, but the return parameters do not have the command's layout.
    case malformed(DecodeError)
    /// The Command Complete is for another command (or is a NOP credit update).
    case wrongOpcode
}

/// Command Complete (Core 5.4 Vol 4 Part E 7.7.14).
public struct HCICommandCompleteEvent: ~Escapable {
    public static let code = HCIEventCode.commandComplete
    /// How many more commands the controller accepts now (flow control credit).
    public let numHCICommandPackets: UInt8
    public let opcode: HCIOpcode
    /// nil only for the NOP opcode 0x0000 without return parameters: a pure credit update.
    public let status: HCIStatus?
    /// The return parameters after the status octet.
    public let returnParameters: Span<UInt8>

    @_lifetime(copy parameters)
    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(parameters, atLeast: 3)
        numHCICommandPackets = try r.u8()
        opcode = HCIOpcode(rawValue: try r.u16())
        if r.isAtEnd {
            // Every real command returns at least a status (Core 5.4 Vol 4 Part E 7.7.14).
            guard opcode == .nop else { throw .truncated(needed: 4, available: parameters.count) }
            status = nil
        } else {
            status = HCIStatus(rawValue: try r.u8())
        }
        returnParameters = r.rest()
    }

    @_lifetime(copy packet)
    public init(_ packet: HCIEventPacket) throws(DecodeError) {
        try expectEventCode(packet.code, Self.code)
        try self.init(parsing: packet.parameters)
    }

    /// The typed return parameters of command `C`, or why there are none.
    public func decode<C: HCICommand>(_: C.Type) throws(HCICommandError) -> C.ReturnParameters {
        guard opcode == C.opcode else { throw .wrongOpcode }
        guard let status else { throw .wrongOpcode }
        guard status == .success else { throw .failed(status) }
        do {
            return try C.ReturnParameters(parsing: returnParameters)
        } catch {
            throw .malformed(error)
        }
    }
}

/// Command Status (Core 5.4 Vol 4 Part E 7.7.15): a command was accepted (or refused) and will
/// finish with its own event.
public struct HCICommandStatusEvent: Equatable, Sendable {
    public static let code = HCIEventCode.commandStatus
    public var status: HCIStatus
    public var numHCICommandPackets: UInt8
    public var opcode: HCIOpcode

    public init(status: HCIStatus, numHCICommandPackets: UInt8, opcode: HCIOpcode) {
        self.status = status
        self.numHCICommandPackets = numHCICommandPackets
        self.opcode = opcode
    }

    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(parameters, exactly: 4)
        status = HCIStatus(rawValue: try r.u8())
        numHCICommandPackets = try r.u8()
        opcode = HCIOpcode(rawValue: try r.u16())
        try r.expectEnd()
    }

    public init(_ packet: HCIEventPacket) throws(DecodeError) {
        try expectEventCode(packet.code, Self.code)
        try self.init(parsing: packet.parameters)
    }
}

/// Disconnection Complete (Core 5.4 Vol 4 Part E 7.7.5).
public struct HCIDisconnectionCompleteEvent: Equatable, Sendable {
    public static let code = HCIEventCode.disconnectionComplete
    public var status: HCIStatus
    public var handle: UInt16
    public var reason: HCIStatus

    public init(status: HCIStatus, handle: UInt16, reason: HCIStatus) {
        self.status = status
        self.handle = handle
        self.reason = reason
    }

    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(parameters, exactly: 4)
        status = HCIStatus(rawValue: try r.u8())
        handle = try r.u16() & 0x0FFF
        reason = HCIStatus(rawValue: try r.u8())
        try r.expectEnd()
    }

    public init(_ packet: HCIEventPacket) throws(DecodeError) {
        try expectEventCode(packet.code, Self.code)
        try self.init(parsing: packet.parameters)
    }
}

/// Number Of Completed Packets (Core 5.4 Vol 4 Part E 7.7.19): ACL buffer credits coming back.
/// The handle count is checked against the length up front, so reading entries cannot fail.
public struct HCINumberOfCompletedPacketsEvent: ~Escapable {
    public static let code = HCIEventCode.numberOfCompletedPackets
    /// Number of (handle, count) entries.
    public let count: Int
    let entries: Span<UInt8>

    @_lifetime(copy parameters)
    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(parameters, atLeast: 1)
        count = Int(try r.u8())
        guard r.remaining == 4 * count else {
            throw .badLength(field: "Num_Handles", declared: count, limit: r.remaining / 4)
        }
        entries = r.rest()
    }

    @_lifetime(copy packet)
    public init(_ packet: HCIEventPacket) throws(DecodeError) {
        try expectEventCode(packet.code, Self.code)
        try self.init(parsing: packet.parameters)
    }

    /// The connection handle (12 bits) of entry `i`.
    public func handle(at i: Int) -> UInt16 {
        precondition(i >= 0 && i < count, "completed packets index out of range")
        return (UInt16(entries[4 * i]) | UInt16(entries[4 * i + 1]) << 8) & 0x0FFF
    }

    /// How many packets of entry `i` the controller finished with.
    public func completedPackets(at i: Int) -> UInt16 {
        precondition(i >= 0 && i < count, "completed packets index out of range")
        return UInt16(entries[4 * i + 2]) | UInt16(entries[4 * i + 3]) << 8
    }

    /// Calls `body(handle, completedPackets)` for each entry in order. Read straight through, without
    /// `handle(at:)`'s index check per entry: this runs for every credit return on the ACL path.
    public func forEach(_ body: (UInt16, UInt16) -> Void) {
        var i = 0
        // i + 4 <= entries.count: each of the four octets is in bounds, read unchecked.
        while i &+ 4 <= entries.count {
            body((UInt16(entries[unchecked: i]) | UInt16(entries[unchecked: i &+ 1]) << 8) & 0x0FFF,
                 UInt16(entries[unchecked: i &+ 2]) | UInt16(entries[unchecked: i &+ 3]) << 8)
            i &+= 4
        }
    }
}

/// Hardware Error (Core 5.4 Vol 4 Part E 7.7.16): the controller failed; the code is vendor specific.
public struct HCIHardwareErrorEvent: Equatable, Sendable {
    public static let code = HCIEventCode.hardwareError
    public var hardwareCode: UInt8

    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(parameters, exactly: 1)
        hardwareCode = try r.u8()
        try r.expectEnd()
    }

    public init(_ packet: HCIEventPacket) throws(DecodeError) {
        try expectEventCode(packet.code, Self.code)
        try self.init(parsing: packet.parameters)
    }
}

/// Data Buffer Overflow (Core 5.4 Vol 4 Part E 7.7.26): the host sent more than its credits.
public struct HCIDataBufferOverflowEvent: Equatable, Sendable {
    public static let code = HCIEventCode.dataBufferOverflow
    /// 0x00 synchronous, 0x01 ACL.
    public var linkType: UInt8

    public var isACL: Bool { linkType == 0x01 }

    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(parameters, exactly: 1)
        linkType = try r.u8()
        try r.expectEnd()
    }

    public init(_ packet: HCIEventPacket) throws(DecodeError) {
        try expectEventCode(packet.code, Self.code)
        try self.init(parsing: packet.parameters)
    }
}

/// Vendor Specific event 0xFF (Core 5.4 Vol 4 Part E 5.4.4): the data is the vendor's.
///
/// Zephyr's hci_uart reports a controller assert as `0xAA`, the file name, a NUL and the
/// 32-bit line number; the host must treat it like a hardware error (the controller is halted).
public struct HCIVendorEvent: ~Escapable {
    public static let code = HCIEventCode.vendorSpecific
    public static let zephyrFatalMarker: UInt8 = 0xAA
    public let data: Span<UInt8>

    @_lifetime(copy parameters)
    public init(parsing parameters: Span<UInt8>) { data = parameters }

    @_lifetime(copy packet)
    public init(_ packet: HCIEventPacket) throws(DecodeError) {
        try expectEventCode(packet.code, Self.code)
        self.init(parsing: packet.parameters)
    }

    /// The first octet, which vendors use as a subevent code.
    public var subevent: UInt8? { data.isEmpty ? nil : data[0] }

    /// A Zephyr controller assert: the controller has stopped and needs a reset. Older hci_uart images
    /// mark it with 0xAA; newer Zephyr reports fatal errors with a data type first, 0x02 being a
    /// controller assert (Zephyr's hci_vs.h), which is recognised only in its exact shape (a
    /// printable, NUL-terminated file name and a 32-bit line), so another vendor's event that starts
    /// with 0x02 is not mistaken for it.
    public var isZephyrFatal: Bool {
        guard let s = subevent else { return false }
        if s == Self.zephyrFatalMarker { return true }
        guard s == Self.zephyrControllerAssertDataType, let nul = zephyrAssertNulIndex, nul > 1 else { return false }
        for i in 1..<nul where data[i] < 0x20 || data[i] > 0x7E { return false }
        return true
    }

    /// Zephyr's `BT_HCI_EVT_VS_ERROR_DATA_TYPE_CTRL_ASSERT`.
    static let zephyrControllerAssertDataType: UInt8 = 0x02

    /// The assert's file name (without the NUL), empty if this is not a well-formed Zephyr assert.
    public var zephyrAssertFile: Span<UInt8> {
        @_lifetime(copy self)
        get {
            guard let nul = zephyrAssertNulIndex else { return data.extracting(0..<0) }
            return data.extracting(1..<nul)
        }
    }

    /// The assert's line number, nil if this is not a well-formed Zephyr assert.
    public var zephyrAssertLine: UInt32? {
        guard let nul = zephyrAssertNulIndex else { return nil }
        var line: UInt32 = 0
        for i in 0..<4 { line |= UInt32(data[nul + 1 + i]) &<< UInt32(8 * i) }
        return line
    }

    private var zephyrAssertNulIndex: Int? {
        guard subevent == Self.zephyrFatalMarker || subevent == Self.zephyrControllerAssertDataType else { return nil }
        var i = 1
        while i < data.count, data[i] != 0 { i += 1 }
        // Exactly four octets of line number must follow the NUL.
        guard i < data.count, data.count - (i + 1) == 4 else { return nil }
        return i
    }
}

/// LE Meta event (Core 5.4 Vol 4 Part E 7.7.65): a subevent code, then that subevent's parameters.
public struct HCILEMetaEvent: ~Escapable {
    public static let code = HCIEventCode.leMeta
    public let subevent: UInt8
    /// The subevent's parameters, after the subevent code.
    public let parameters: Span<UInt8>

    @_lifetime(copy parameters)
    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(parameters, atLeast: 1)
        subevent = try r.u8()
        self.parameters = r.rest()
    }

    /// From parameters the caller checked hold at least the subevent code (`HCIHost` counts an LE
    /// Meta event without one as its own kind of drop).
    @_lifetime(copy parameters)
    init(checked parameters: Span<UInt8>) {
        subevent = parameters[0]
        self.parameters = parameters.extracting(1..<parameters.count)
    }

    @_lifetime(copy packet)
    public init(_ packet: HCIEventPacket) throws(DecodeError) {
        try expectEventCode(packet.code, Self.code)
        try self.init(parsing: packet.parameters)
    }
}

/// Checks a meta event carries the expected subevent before a typed parse.
@inline(__always)
func expectSubevent(_ code: UInt8, _ expected: UInt8) throws(DecodeError) {
    guard code == expected else { throw .unexpectedCode(field: "LE subevent code", value: Int(code)) }
}
