/// Security Manager Protocol command codes (Core 5.4 Vol 3 Part H 3.3, Table 3.1), as far as this
/// host needs them.
public struct SMPCode: RawRepresentable, Equatable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let pairingRequest = SMPCode(rawValue: 0x01)
    public static let pairingResponse = SMPCode(rawValue: 0x02)
    public static let pairingFailed = SMPCode(rawValue: 0x05)
    public static let securityRequest = SMPCode(rawValue: 0x0B)
}

/// Pairing Failed reasons (Core 5.4 Vol 3 Part H 3.5.5, Table 3.7) used here.
public struct SMPPairingFailedReason: RawRepresentable, Equatable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// 0x05: pairing is not supported by the device.
    public static let pairingNotSupported = SMPPairingFailedReason(rawValue: 0x05)
    /// 0x0A: the command length is invalid or a parameter is out of range.
    public static let invalidParameters = SMPPairingFailedReason(rawValue: 0x0A)
}

/// Pairing Request (Core 5.4 Vol 3 Part H 3.5.1): IO capability, OOB flag, AuthReq, maximum
/// encryption key size, initiator and responder key distribution (one byte each).
public struct SMPPairingRequest: Sendable, Equatable {
    public var ioCapability: UInt8
    public var oobDataFlag: UInt8
    public var authRequirements: UInt8
    public var maxEncryptionKeySize: UInt8
    public var initiatorKeyDistribution: UInt8
    public var responderKeyDistribution: UInt8

    public init(parsing pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, exactly: 7)
        let code = try r.u8()
        guard code == SMPCode.pairingRequest.rawValue else {
            throw .unexpectedCode(field: "SMP code", value: Int(code))
        }
        ioCapability = try r.u8()
        oobDataFlag = try r.u8()
        authRequirements = try r.u8()
        maxEncryptionKeySize = try r.u8()
        initiatorKeyDistribution = try r.u8()
        responderKeyDistribution = try r.u8()
        try r.expectEnd()
    }
}

/// Pairing Failed (Core 5.4 Vol 3 Part H 3.5.5): code 0x05 and a one-byte reason.
public struct SMPPairingFailed: Sendable, Equatable {
    public var reason: SMPPairingFailedReason

    public init(reason: SMPPairingFailedReason) { self.reason = reason }

    public init(parsing pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, exactly: 2)
        let code = try r.u8()
        guard code == SMPCode.pairingFailed.rawValue else { throw .unexpectedCode(field: "SMP code", value: Int(code)) }
        reason = SMPPairingFailedReason(rawValue: try r.u8())
        try r.expectEnd()
    }

    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(SMPCode.pairingFailed.rawValue)
        sink.append(reason.rawValue)
    }
}

/// What the SMP channel did with one PDU.
public enum SMPOutcome: Sendable, Equatable {
    /// A Pairing Request was refused; a Pairing Failed was written as the reply.
    case refusedPairing(SMPPairingFailedReason)
    /// A Security Request (Core 5.4 Vol 3 Part H 3.6.7) was ignored by policy: we start no pairing,
    /// the link stays unencrypted and the peripheral decides whether to carry on.
    case ignoredSecurityRequest
    /// Anything else (or an empty PDU): discarded without reply.
    case dropped
}

/// This host does not pair. SMP on CID 0x0006 refuses every Pairing Request with Pairing Failed
/// "Pairing Not Supported" (a malformed one with "Invalid Parameters", Core 5.4 Vol 3 Part H 3.5.5),
/// ignores Security Requests and drops the rest, since no pairing procedure can be in progress.
public enum SMPPairingRefusal {
    public static func handle<S: ByteSink>(_ pdu: Span<UInt8>, reply: inout S) -> SMPOutcome {
        guard pdu.count >= 1 else { return .dropped }
        switch SMPCode(rawValue: pdu[0]) {
        case .pairingRequest:
            let reason: SMPPairingFailedReason
            do {
                _ = try SMPPairingRequest(parsing: pdu)
                reason = .pairingNotSupported
            } catch {
                reason = .invalidParameters
            }
            SMPPairingFailed(reason: reason).write(to: &reply)
            return .refusedPairing(reason)
        case .securityRequest:
            return .ignoredSecurityRequest
        default:
            return .dropped
        }
    }
}
