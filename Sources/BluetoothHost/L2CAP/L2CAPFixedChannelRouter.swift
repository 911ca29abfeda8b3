/// Where an inbound LE-U PDU went.
public enum L2CAPInbound: Sendable, Equatable {
    /// Attribute protocol: the caller hands the payload to the link's ATT bearer.
    case att
    /// LE signalling: handled; a reply, if written, goes back on CID 0x0005.
    case signaling(L2CAPSignalingAction)
    /// Security Manager: handled; a reply, if written, goes back on CID 0x0006.
    case smp(SMPOutcome)
    /// A channel we do not serve (dynamic channels are never opened): dropped.
    case unknownChannel(L2CAPChannelID)

    /// The channel on which any reply written during routing must be sent.
    public var replyChannel: L2CAPChannelID? {
        switch self {
        case .signaling: return .leSignaling
        case .smp: return .smp
        case .att, .unknownChannel: return nil
        }
    }
}

/// Fixed-channel dispatch on LE-U (Core 5.4 Vol 3 Part A 2.1, Table 2.3): ATT 0x0004 to the caller,
/// LE signalling 0x0005 and SMP 0x0006 handled here, anything else dropped and counted.
public struct L2CAPFixedChannelRouter: Sendable {
    public private(set) var attPDUs = 0
    public private(set) var signalingPDUs = 0
    public private(set) var smpPDUs = 0
    public private(set) var unknownChannelPDUs = 0

    public init() {}

    /// Routes one complete B-frame payload. Replies (without basic header) are written to `reply`;
    /// send them on `result.replyChannel`. A 23-byte buffer is always enough.
    /// `signaling`: the signalling procedures the host takes part in (`L2CAPSignalingProcedures`).
    public mutating func route<S: ByteSink>(channel: L2CAPChannelID, payload: Span<UInt8>, role: ConnectionRole,
                                            signaling procedures: L2CAPSignalingProcedures = .all,
                                            reply: inout S) -> L2CAPInbound {
        switch channel {
        case .att: attPDUs &+= 1
        case .leSignaling: signalingPDUs &+= 1
        case .smp: smpPDUs &+= 1
        default: unknownChannelPDUs &+= 1
        }
        return Self.route(channel: channel, payload: payload, role: role, signaling: procedures, reply: &reply)
    }

    /// `route` without the counts, for a host that keeps none (`LEStack`, whose application's
    /// `StackCounters` say what it counts).
    public static func route<S: ByteSink>(channel: L2CAPChannelID, payload: Span<UInt8>, role: ConnectionRole,
                                          signaling procedures: L2CAPSignalingProcedures = .all,
                                          reply: inout S) -> L2CAPInbound {
        switch channel {
        case .att:
            return .att
        case .leSignaling:
            return .signaling(L2CAPSignalingHandler.handle(payload, role: role, procedures: procedures, reply: &reply))
        case .smp:
            return .smp(SMPPairingRefusal.handle(payload, reply: &reply))
        default:
            return .unknownChannel(channel)
        }
    }
}
