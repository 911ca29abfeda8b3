/// Signalling command codes used on the LE signalling channel 0x0005 (Core 5.4 Vol 3 Part A 4,
/// Table 4.2). Codes not listed here (BR/EDR-only or unknown) are answered with Command Reject.
public struct L2CAPSignalingCode: RawRepresentable, Equatable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let commandReject = L2CAPSignalingCode(rawValue: 0x01)
    public static let disconnectionRequest = L2CAPSignalingCode(rawValue: 0x06)
    public static let disconnectionResponse = L2CAPSignalingCode(rawValue: 0x07)
    public static let connectionParameterUpdateRequest = L2CAPSignalingCode(rawValue: 0x12)
    public static let connectionParameterUpdateResponse = L2CAPSignalingCode(rawValue: 0x13)
    public static let leCreditBasedConnectionRequest = L2CAPSignalingCode(rawValue: 0x14)
    public static let leCreditBasedConnectionResponse = L2CAPSignalingCode(rawValue: 0x15)
    public static let flowControlCreditIndication = L2CAPSignalingCode(rawValue: 0x16)
    public static let creditBasedConnectionRequest = L2CAPSignalingCode(rawValue: 0x17)
    public static let creditBasedConnectionResponse = L2CAPSignalingCode(rawValue: 0x18)
    public static let creditBasedReconfigureRequest = L2CAPSignalingCode(rawValue: 0x19)
    public static let creditBasedReconfigureResponse = L2CAPSignalingCode(rawValue: 0x1A)

    /// Responses are never answered: an unexpected one is silently discarded.
    public var isResponse: Bool {
        self == .commandReject || self == .disconnectionResponse || self == .connectionParameterUpdateResponse
            || self == .leCreditBasedConnectionResponse || self == .creditBasedConnectionResponse
            || self == .creditBasedReconfigureResponse
    }
}

/// A zero-copy view of one signalling command: code (u8), identifier (u8), length (u16), data
/// (Core 5.4 Vol 3 Part A 4). On LE-U a C-frame carries exactly one command, so the length must
/// account for every byte of the frame.
public struct L2CAPSignalingCommand: ~Escapable {
    public static let headerSize = 4
    /// The LE signalling MTU this host supports: the minimum, 23 (Core 5.4 Vol 3 Part A 4).
    public static let leSignalingMTU = 23

    public let code: L2CAPSignalingCode
    public let identifier: UInt8
    public let data: Span<UInt8>

    @_lifetime(copy bytes)
    public init(parsing bytes: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(bytes, atLeast: 4)
        code = L2CAPSignalingCode(rawValue: try r.u8())
        identifier = try r.u8()
        let length = Int(try r.u16())
        guard length == r.remaining else {
            throw .badLength(field: "signalling length", declared: length, limit: r.remaining)
        }
        data = r.rest()
    }

    /// Writes a command header; `dataLength` bytes of data must follow.
    public static func writeHeader<S: ByteSink>(code: L2CAPSignalingCode, identifier: UInt8, dataLength: Int,
                                                to sink: inout S) {
        sink.append(code.rawValue)
        sink.append(identifier)
        sink.append(u16: UInt16(truncatingIfNeeded: dataLength))
    }
}

/// Reason of a Command Reject (Core 5.4 Vol 3 Part A 4.1, Table 4.4), with its reason data.
public enum L2CAPCommandRejectReason: Sendable, Equatable {
    /// 0x0000: unknown or malformed command.
    case commandNotUnderstood
    /// 0x0001: the command was longer than our signalling MTU, which is reported.
    case signalingMTUExceeded(actualMTU: UInt16)
    /// 0x0002: the request named a channel that does not exist (local then remote CID, from the
    /// rejecting side's point of view).
    case invalidCID(local: UInt16, remote: UInt16)
    /// Any other reason a peer sent us (its data is not kept).
    case other(UInt16)

    public var rawValue: UInt16 {
        switch self {
        case .commandNotUnderstood: return 0x0000
        case .signalingMTUExceeded: return 0x0001
        case .invalidCID: return 0x0002
        case .other(let v): return v
        }
    }
}

/// Command Reject (Core 5.4 Vol 3 Part A 4.1): reason (u16) and 0, 2 or 4 bytes of reason data.
/// The identifier echoes the rejected command's.
public struct L2CAPCommandReject: Sendable, Equatable {
    public var identifier: UInt8
    public var reason: L2CAPCommandRejectReason

    public init(identifier: UInt8, reason: L2CAPCommandRejectReason) {
        self.identifier = identifier
        self.reason = reason
    }

    public init(parsing command: borrowing L2CAPSignalingCommand) throws(DecodeError) {
        guard command.code == .commandReject else {
            throw .unexpectedCode(field: "signalling code", value: Int(command.code.rawValue))
        }
        var r = ByteReader(command.data)
        let raw = try r.u16()
        switch raw {
        case 0x0000:
            reason = .commandNotUnderstood
        case 0x0001:
            reason = .signalingMTUExceeded(actualMTU: try r.u16())
        case 0x0002:
            let local = try r.u16()
            reason = .invalidCID(local: local, remote: try r.u16())
        default:
            reason = .other(raw)
            _ = r.rest()
        }
        try r.expectEnd()
        identifier = command.identifier
    }

    public func write<S: ByteSink>(to sink: inout S) {
        let dataLength: Int
        switch reason {
        case .commandNotUnderstood, .other: dataLength = 2
        case .signalingMTUExceeded: dataLength = 4
        case .invalidCID: dataLength = 6
        }
        L2CAPSignalingCommand.writeHeader(code: .commandReject, identifier: identifier, dataLength: dataLength, to: &sink)
        sink.append(u16: reason.rawValue)
        switch reason {
        case .signalingMTUExceeded(let mtu): sink.append(u16: mtu)
        case .invalidCID(let local, let remote):
            sink.append(u16: local)
            sink.append(u16: remote)
        case .commandNotUnderstood, .other: break
        }
    }
}

/// Connection Parameter Update Request (Core 5.4 Vol 3 Part A 4.20): sent by the peripheral only.
/// Interval in 1.25 ms units, latency in connection events, timeout in 10 ms units.
public struct L2CAPConnectionParameterUpdateRequest: Sendable, Equatable {
    public var identifier: UInt8
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var latency: UInt16
    public var timeout: UInt16

    public init(identifier: UInt8, intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16) {
        self.identifier = identifier
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.latency = latency
        self.timeout = timeout
    }

    public init(parsing command: borrowing L2CAPSignalingCommand) throws(DecodeError) {
        guard command.code == .connectionParameterUpdateRequest else {
            throw .unexpectedCode(field: "signalling code", value: Int(command.code.rawValue))
        }
        var r = try ByteReader(command.data, exactly: 8)
        identifier = command.identifier
        intervalMin = try r.u16()
        intervalMax = try r.u16()
        latency = try r.u16()
        timeout = try r.u16()
        try r.expectEnd()
    }

    /// Checks the ranges of Core 5.4 Vol 3 Part A 4.20 (interval 0x0006…0x0C80 with min ≤ max,
    /// latency 0x0000…0x01F3, timeout 0x000A…0x0C80) and the rule every controller enforces on the
    /// resulting LE Connection Update (Vol 4 Part E 7.8.18, Vol 6 Part B 4.5.2): the timeout must
    /// exceed (1 + latency) × interval max × 2, i.e. timeout×10 ms > (1+latency)×max×1.25 ms×2,
    /// which in integer units is timeout × 4 > (1 + latency) × max.
    public func validate() throws(DecodeError) {
        guard (0x0006...0x0C80).contains(intervalMin) else {
            throw .invalidValue(field: "interval min", value: Int(intervalMin))
        }
        guard (0x0006...0x0C80).contains(intervalMax), intervalMin <= intervalMax else {
            throw .invalidValue(field: "interval max", value: Int(intervalMax))
        }
        guard latency <= 0x01F3 else { throw .invalidValue(field: "latency", value: Int(latency)) }
        guard (0x000A...0x0C80).contains(timeout) else { throw .invalidValue(field: "timeout", value: Int(timeout)) }
        guard Int(timeout) * 4 > (1 + Int(latency)) * Int(intervalMax) else {
            throw .invalidValue(field: "timeout", value: Int(timeout))
        }
    }

    public var isValid: Bool {
        do { try validate(); return true } catch { return false }
    }

    public func write<S: ByteSink>(to sink: inout S) {
        L2CAPSignalingCommand.writeHeader(code: .connectionParameterUpdateRequest, identifier: identifier,
                                          dataLength: 8, to: &sink)
        sink.append(u16: intervalMin)
        sink.append(u16: intervalMax)
        sink.append(u16: latency)
        sink.append(u16: timeout)
    }
}

/// Connection Parameter Update Response (Core 5.4 Vol 3 Part A 4.21): result 0x0000 accepted,
/// 0x0001 rejected.
public struct L2CAPConnectionParameterUpdateResponse: Sendable, Equatable {
    public var identifier: UInt8
    public var accepted: Bool

    public init(identifier: UInt8, accepted: Bool) {
        self.identifier = identifier
        self.accepted = accepted
    }

    public init(parsing command: borrowing L2CAPSignalingCommand) throws(DecodeError) {
        guard command.code == .connectionParameterUpdateResponse else {
            throw .unexpectedCode(field: "signalling code", value: Int(command.code.rawValue))
        }
        var r = try ByteReader(command.data, exactly: 2)
        let result = try r.u16()
        try r.expectEnd()
        guard result <= 0x0001 else { throw .invalidValue(field: "update result", value: Int(result)) }
        identifier = command.identifier
        accepted = result == 0x0000
    }

    public func write<S: ByteSink>(to sink: inout S) {
        L2CAPSignalingCommand.writeHeader(code: .connectionParameterUpdateResponse, identifier: identifier,
                                          dataLength: 2, to: &sink)
        sink.append(u16: accepted ? 0x0000 : 0x0001)
    }
}
