/// What the host must do after a signalling PDU, beyond sending the reply (if one was written).
public enum L2CAPSignalingAction: Sendable, Equatable {
    /// Nothing more (a reply may have been written).
    case none
    /// We are central and the peripheral asked for new parameters, which passed validation. No reply
    /// has been written yet: the host issues HCI LE Connection Update (Core 5.4 Vol 4 Part E 7.8.18)
    /// and answers with `L2CAPConnectionParameterUpdateResponse(identifier:accepted:)`, accepted if the
    /// controller took the command and rejected otherwise (Vol 3 Part A 4.21). Keep the identifier in
    /// `L2CAPSignalingState.pendingPeerUpdate` meanwhile.
    case updateConnectionParameters(L2CAPConnectionParameterUpdateRequest)
    /// The central answered our Connection Parameter Update Request.
    case connectionParameterUpdateResponse(identifier: UInt8, accepted: Bool)
    /// The peer rejected one of our requests (e.g. a central that does not understand our update request).
    case commandRejected(identifier: UInt8, reason: L2CAPCommandRejectReason)
    /// The PDU was discarded without reply (identifier 0x00, unparseable header, or a response /
    /// indication we have no use for).
    case ignored
}

/// Which of the optional signalling procedures a host takes part in, beyond answering what it does
/// not support (Core 5.4 Vol 3 Part A 4). A constant from the application's type
/// (`LEApplication.connectsAsCentral`, `requestsConnectionParameters`), as `GATTServerFeatures` is
/// for the ATT server: what a host never does is then not parsed, and its parsers are not linked.
public struct L2CAPSignalingProcedures: Sendable {
    /// As central, validates and answers a peripheral's Connection Parameter Update Request
    /// (4.20-4.21). Without it no link of ours is central, and as peripheral a request gets Command
    /// Reject whatever it holds (only a peripheral may send one, 4.20): it is not parsed.
    public var answersParameterRequests: Bool
    /// Sends Connection Parameter Update Requests of its own, so reads their answers: the Response
    /// and a Command Reject (4.1, 4.21). Without it both are responses to nothing, which a host
    /// discards (a response is never answered): they are ignored unparsed.
    public var sendsParameterRequests: Bool

    public init(answersParameterRequests: Bool = true, sendsParameterRequests: Bool = true) {
        self.answersParameterRequests = answersParameterRequests
        self.sendsParameterRequests = sendsParameterRequests
    }

    /// Both: the default.
    public static var all: L2CAPSignalingProcedures { L2CAPSignalingProcedures() }
}

/// The LE signalling channel (CID 0x0005) as a pure function: one C-frame in, at most one reply
/// command out (written to `reply`, at most `L2CAPSignalingCommand.leSignalingMTU` bytes, without
/// the L2CAP basic header) plus an action for the host.
///
/// Policy (Core 5.4 Vol 3 Part A 4):
/// - Connection Parameter Update Request: only a peripheral may send it (4.20); as central we
///   validate it and return `.updateConnectionParameters` or reply rejected; as peripheral we reply
///   Command Reject "not understood".
/// - LE Credit Based / Credit Based Connection Request: refused with result "SPSM not supported"
///   (we register no SPSM).
/// - Disconnection Request: no dynamic channel exists, so Command Reject "invalid CID" (4.6).
/// - Flow Control Credit Indication: no channel to credit, discarded (indications get no reply).
/// - Unexpected responses: discarded (a response is never answered).
/// - Any other code, or a malformed command: Command Reject "command not understood", identifier echoed.
public enum L2CAPSignalingHandler {
    public static func handle<S: ByteSink>(_ pdu: Span<UInt8>, role: ConnectionRole,
                                           procedures: L2CAPSignalingProcedures = .all,
                                           reply: inout S) -> L2CAPSignalingAction {
        // Header first: without an identifier nothing can be answered.
        guard pdu.count >= L2CAPSignalingCommand.headerSize else { return .ignored }
        let code = L2CAPSignalingCode(rawValue: pdu[0])
        let identifier = pdu[1]
        // Identifier 0x00 is illegal in every command (Core 5.4 Vol 3 Part A 4).
        guard identifier != 0 else { return .ignored }
        if pdu.count > L2CAPSignalingCommand.leSignalingMTU && !code.isResponse {
            L2CAPCommandReject(identifier: identifier,
                               reason: .signalingMTUExceeded(actualMTU: UInt16(L2CAPSignalingCommand.leSignalingMTU)))
                .write(to: &reply)
            return .none
        }
        let command: L2CAPSignalingCommand
        do {
            command = try L2CAPSignalingCommand(parsing: pdu)
        } catch {
            return notUnderstood(identifier, code: code, reply: &reply)
        }
        do {
            return try dispatch(command, role: role, procedures: procedures, reply: &reply)
        } catch {
            return notUnderstood(identifier, code: code, reply: &reply)
        }
    }

    static func notUnderstood<S: ByteSink>(_ identifier: UInt8, code: L2CAPSignalingCode,
                                           reply: inout S) -> L2CAPSignalingAction {
        guard !code.isResponse else { return .ignored }
        L2CAPCommandReject(identifier: identifier, reason: .commandNotUnderstood).write(to: &reply)
        return .none
    }

    static func dispatch<S: ByteSink>(_ command: borrowing L2CAPSignalingCommand, role: ConnectionRole,
                                      procedures: L2CAPSignalingProcedures,
                                      reply: inout S) throws(DecodeError) -> L2CAPSignalingAction {
        let identifier = command.identifier
        switch command.code {
        case .connectionParameterUpdateRequest:
            // A peripheral rejects it unparsed: the reply is the same Command Reject whether it
            // parses or not (4.20).
            guard procedures.answersParameterRequests, role == .central else {
                L2CAPCommandReject(identifier: identifier, reason: .commandNotUnderstood).write(to: &reply)
                return .none
            }
            let request = try L2CAPConnectionParameterUpdateRequest(parsing: command)
            guard request.isValid else {
                L2CAPConnectionParameterUpdateResponse(identifier: identifier, accepted: false).write(to: &reply)
                return .none
            }
            return .updateConnectionParameters(request)

        case .connectionParameterUpdateResponse:
            guard procedures.sendsParameterRequests else { return .ignored }
            let response = try L2CAPConnectionParameterUpdateResponse(parsing: command)
            return .connectionParameterUpdateResponse(identifier: identifier, accepted: response.accepted)

        case .commandReject:
            guard procedures.sendsParameterRequests else { return .ignored }
            let reject = try L2CAPCommandReject(parsing: command)
            return .commandRejected(identifier: identifier, reason: reject.reason)

        case .leCreditBasedConnectionRequest:
            _ = try L2CAPLECreditBasedConnectionRequest(parsing: command)
            L2CAPLECreditBasedConnectionResponse(identifier: identifier, result: .spsmNotSupported).write(to: &reply)
            return .none

        case .creditBasedConnectionRequest:
            let request = try L2CAPCreditBasedConnectionRequest(parsing: command)
            L2CAPCreditBasedConnectionResponse(identifier: identifier, result: .spsmNotSupported,
                                               channelCount: request.channelCount).write(to: &reply)
            return .none

        case .disconnectionRequest:
            let request = try L2CAPDisconnectionRequest(parsing: command)
            L2CAPCommandReject(identifier: identifier,
                               reason: .invalidCID(local: request.destinationCID, remote: request.sourceCID))
                .write(to: &reply)
            return .none

        case .flowControlCreditIndication:
            return .ignored

        default:
            if command.code.isResponse { return .ignored }
            L2CAPCommandReject(identifier: identifier, reason: .commandNotUnderstood).write(to: &reply)
            return .none
        }
    }
}
