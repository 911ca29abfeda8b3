/// Per-link bookkeeping for the LE signalling channel: identifiers and the one request of each
/// direction that may be outstanding. Kept in each `Connection`; time comes in as `now` (ms).
///
/// Core 5.4 Vol 3 Part A 4: each new command uses a different identifier, 0x00 is never used, and an
/// identifier may be reused once all others have been used — so a counter over 1…255 suffices.
/// Vol 3 Part A 6.2.1: a request still unanswered when the RTX timer expires is abandoned;
/// `requestTimedOut(now:)` tells the host when, and it decides whether to give up or disconnect.
public struct L2CAPSignalingState: Sendable, Equatable {
    /// Response timeout for our own requests (the RTX value is the implementation's choice within
    /// 1–60 s).
    public static let responseTimeoutMilliseconds: UInt64 = 30_000

    var lastIdentifier: UInt8 = 0
    /// Identifier of our Connection Parameter Update Request awaiting a response.
    public private(set) var outstandingRequest: UInt8? = nil
    /// When it was sent (ms, caller's clock).
    public private(set) var outstandingSince: UInt64 = 0
    /// Identifier of the peer's update request that we accepted for HCI LE Connection Update and
    /// still have to answer.
    public var pendingPeerUpdate: UInt8? = nil

    public init() {}

    /// The identifier for the next command we send.
    public mutating func nextIdentifier() -> UInt8 {
        lastIdentifier = lastIdentifier == 0xFF ? 1 : lastIdentifier + 1
        return lastIdentifier
    }

    /// Builds our Connection Parameter Update Request (peripheral only, Core 5.4 Vol 3 Part A 4.20)
    /// with a fresh identifier and marks it outstanding. Returns nil while one is already outstanding,
    /// unless that one has waited past the response timeout: it is abandoned then (Vol 3 Part A 6.2.1).
    public mutating func makeParameterUpdateRequest(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16,
                                                    timeout: UInt16, now: UInt64)
        -> L2CAPConnectionParameterUpdateRequest?
    {
        guard outstandingRequest == nil || requestTimedOut(now: now) else { return nil }
        let identifier = nextIdentifier()
        outstandingRequest = identifier
        outstandingSince = now
        return L2CAPConnectionParameterUpdateRequest(identifier: identifier, intervalMin: intervalMin,
                                                     intervalMax: intervalMax, latency: latency, timeout: timeout)
    }

    /// Matches a response or Command Reject to our outstanding request. True (and clears it) when the
    /// identifier matches; a response with any other identifier is to be discarded (Vol 3 Part A 4).
    public mutating func resolve(identifier: UInt8) -> Bool {
        guard let id = outstandingRequest, id == identifier else { return false }
        outstandingRequest = nil
        return true
    }

    /// Whether our outstanding request has waited longer than the response timeout.
    public func requestTimedOut(now: UInt64) -> Bool {
        guard outstandingRequest != nil else { return false }
        return now >= outstandingSince && now - outstandingSince >= Self.responseTimeoutMilliseconds
    }
}
