/// Why an ACL fragment was not accepted by an `ACLReassembler`. The offending PDU is always dropped;
/// the link itself stays usable (a peer must never be able to wedge the host).
public enum ACLReassemblyError: Error, Sendable, Equatable {
    /// The L2CAP basic header declares a payload larger than this reassembler holds. The rest of
    /// that PDU's continuation fragments are skipped silently.
    case pduTooLarge(declared: Int, capacity: Int)
    /// A continuation fragment arrived with no PDU in progress (Core 5.4 Vol 4 Part E 5.4.2).
    case continuationWithoutStart
    /// The fragments carried more bytes than the L2CAP basic header declared
    /// (Core 5.4 Vol 3 Part A 3.1: such a PDU is invalid and discarded).
    case lengthOverrun(declared: Int, received: Int)
    /// Broadcast flag other than point-to-point: not defined on LE-U (Core 5.4 Vol 4 Part E 5.4.2).
    case notPointToPoint
}

/// What feeding one fragment produced.
public enum ACLReassemblyResult: Sendable, Equatable {
    /// More fragments are needed.
    case incomplete
    /// A whole L2CAP PDU is ready: read it from `ACLReassembler.payload` before the next fragment.
    case complete(channel: L2CAPChannelID, length: Int)
}

/// A link's inbound L2CAP reassembly, as the connection table uses it: `ACLReassembler<n>` with the
/// capacity an application chooses (`LEApplication.LinkBuffers`).
public protocol L2CAPReassembling {
    init()
    /// The largest information payload accepted.
    static var maxPayload: Int { get }
    mutating func receive(_ packet: borrowing HCIACLDataPacket) throws(ACLReassemblyError) -> ACLReassemblyResult
    /// Calls `body` with `context` and the payload of the last completed PDU (empty if none). The
    /// context is a separate argument so that a caller can pass another part of the value that
    /// holds this reassembler (the link's upper-layer state) while the payload is borrowed. Mutating
    /// although it only reads: called non-mutating, the whole reassembler (its buffer) was first
    /// copied into the caller's frame (Swift 6.3, Embedded, -Osize: 0.27 KB of the wearable's
    /// main-loop stack).
    mutating func withPayload<Context, R>(_ context: inout Context, _ body: (inout Context, Span<UInt8>) -> R) -> R
}

/// Rebuilds L2CAP PDUs from the controller's ACL fragments for one link (Core 5.4 Vol 4 Part E 5.4.2,
/// Vol 3 Part A 7.2). `capacity` is the largest information payload accepted, e.g. the ATT MTU (247
/// for a 251-byte LE data length) — size it by purpose, not by the largest thing a peer may send.
///
/// Rules: a start fragment begins a PDU and its basic header gives the total length; continuations
/// append; a new start while a PDU is unfinished discards the old one (counted); a continuation with
/// nothing in progress is dropped (counted). The basic header itself may be split across fragments.
public struct ACLReassembler<let capacity: Int>: L2CAPReassembling {
    enum State: Equatable {
        case idle
        /// Collecting the 4-byte basic header (only when a start fragment carried fewer than 4 bytes).
        case header
        /// Collecting `expected` payload bytes.
        case payload
        /// Discarding the rest of an oversized PDU: this many bytes still to come.
        case skipping(remaining: Int)
    }

    var state: State = .idle
    var storage: InlineArray<capacity, UInt8>
    var headerBytes: InlineArray<4, UInt8>
    var headerCount = 0
    var expected = 0
    var received = 0
    var currentChannel = L2CAPChannelID.null
    /// Length of the last completed PDU, valid until the next fragment is fed.
    var completedLength = 0

    /// PDUs delivered whole.
    public private(set) var completedPDUs = 0
    /// Unfinished PDUs thrown away because a new start fragment arrived.
    public private(set) var discardedIncomplete = 0
    /// Continuations that arrived with no PDU in progress.
    public private(set) var orphanContinuations = 0
    /// PDUs refused for declaring more than `capacity` bytes.
    public private(set) var oversizedPDUs = 0
    /// PDUs whose fragments overran the declared length.
    public private(set) var overruns = 0

    public init() {
        storage = InlineArray(repeating: 0)
        headerBytes = InlineArray(repeating: 0)
    }

    /// The largest information payload this reassembler accepts.
    public var maxPayload: Int { capacity }
    public static var maxPayload: Int { capacity }

    /// Whether a PDU is partly received.
    public var isInProgress: Bool { state == .header || state == .payload }

    /// The channel of the last completed PDU.
    public var channel: L2CAPChannelID { currentChannel }

    /// The information payload of the last completed PDU (empty if none).
    public var payload: Span<UInt8> {
        @_addressableSelf
        @_lifetime(borrow self)
        borrowing get { storage.span.extracting(0..<completedLength) }
    }

    public mutating func withPayload<Context, R>(_ context: inout Context, _ body: (inout Context, Span<UInt8>) -> R) -> R {
        body(&context, payload)
    }

    /// Forgets any partial PDU (e.g. on disconnection) without counting it.
    public mutating func reset() {
        state = .idle
        headerCount = 0
        received = 0
        completedLength = 0
    }

    public mutating func receive(_ packet: borrowing HCIACLDataPacket) throws(ACLReassemblyError)
        -> ACLReassemblyResult
    {
        guard packet.broadcast == .pointToPoint else { throw .notPointToPoint }
        return try receive(boundary: packet.boundary, data: packet.data)
    }

    public mutating func receive(boundary: HCIACLPacketBoundary, data: Span<UInt8>) throws(ACLReassemblyError)
        -> ACLReassemblyResult
    {
        completedLength = 0
        var index = 0
        if boundary.isStart {
            if isInProgress { discardedIncomplete &+= 1 }
            state = .header
            headerCount = 0
            received = 0
        } else {
            switch state {
            case .idle:
                orphanContinuations &+= 1
                throw .continuationWithoutStart
            case .skipping(let remaining):
                // Tail of a PDU already refused as too large: swallow it without another error.
                // A 16-bit length less a packet's count: unchecked (it cannot overflow), as are the
                // positions below, each within `data`, the header's four octets or `expected`.
                let left = remaining &- data.count
                state = left > 0 ? .skipping(remaining: left) : .idle
                return .incomplete
            case .header, .payload:
                break
            }
        }

        if state == .header {
            while headerCount < 4 && index < data.count {
                headerBytes[headerCount] = data[index]
                headerCount &+= 1
                index &+= 1
            }
            guard headerCount == 4 else { return .incomplete }
            expected = Int(UInt16(headerBytes[0]) | UInt16(headerBytes[1]) &<< 8)
            currentChannel = L2CAPChannelID(rawValue: UInt16(headerBytes[2]) | UInt16(headerBytes[3]) &<< 8)
            guard expected <= capacity else {
                oversizedPDUs &+= 1
                let left = expected &- (data.count &- index)
                state = left > 0 ? .skipping(remaining: left) : .idle
                throw .pduTooLarge(declared: expected, capacity: capacity)
            }
            state = .payload
        }

        let incoming = data.count &- index
        // `received` is at most `expected`: the room left, compared without a sum that could overflow.
        guard incoming <= expected &- received else {
            overruns &+= 1
            state = .idle
            throw .lengthOverrun(declared: expected, received: received + incoming)
        }
        // One pass over two spans the checks above bound: the optimiser makes it a block copy.
        var target = storage.mutableSpan
        let start = received
        for i in 0..<incoming { target[start &+ i] = data[index &+ i] }
        received &+= incoming
        guard received == expected else { return .incomplete }
        state = .idle
        completedLength = received
        completedPDUs &+= 1
        return .complete(channel: currentChannel, length: received)
    }
}
