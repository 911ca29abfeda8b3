/// Per-connection ATT state (Core 5.4 Vol 3 Part F 3.2.11, 3.3.2, 3.3.3): the link's one ATT_MTU, its
/// security, the prepare-write queue and the one indication we may have outstanding. The connection
/// layer keeps one per link and hands it to `ATTServer.handle` with every PDU from that link.
///
/// One bearer per link, one ATT_MTU on it, for client and server alike (Part F 3.4.2.2): each side's
/// client may exchange it once, and either exchange sets it for both roles, as Zephyr's `bt_att_chan`
/// keeps one MTU per channel. Our server sets it answering the peer's request; `LEStack` sets it
/// from the peer's answer to our client's (`clientExchangeAnswered`) and tells the application.
///
/// `Queue` holds the link's prepared writes (Part F 3.4.6.1): `ATTPreparedWrites<entries, octets>`,
/// or `ATTNoPrepareQueue` for a server that offers no queued writes (`GATTServerFeatures`), whose
/// links then carry no queue at all. The application chooses it (`GATTServerDelegate.PrepareQueue`).
public struct ATTBearer<Queue: ATTPrepareQueue> {
    /// ATT_MTU in use by both roles: 23 until an Exchange MTU succeeds (Part G 5.2.1).
    public internal(set) var mtu: UInt16 = ATTMTU.minimum
    /// The peer's client exchanged ATT_MTU with our server; a client sends it once (Part F 3.4.2.1).
    public internal(set) var exchangedByPeer = false
    /// The peer's server answered our client's Exchange MTU Request.
    public internal(set) var exchangedByUs = false
    /// Security the link has now; the connection layer updates it after encryption changes.
    public var security = ATTLinkSecurity()
    /// The indication awaiting its confirmation (Part F 3.4.7.2: only one at a time).
    public internal(set) var pendingIndicationHandle: UInt16 = 0
    public internal(set) var pendingIndicationSentAt: UInt64 = 0
    /// A transaction timed out: no more ATT PDUs may be sent on this bearer (Part F 3.3.3).
    public internal(set) var isTimedOut = false
    /// Prepared writes waiting for Execute Write.
    public internal(set) var queue = Queue()

    public init() {}

    /// Prepared writes in the queue.
    public var queuedWrites: Int { queue.count }

    /// The peer's server answered our client's Exchange MTU Request with `serverRxMTU`; we offered
    /// `localRxMTU`, the device's one receive MTU (a device's request and response carry the same,
    /// Part F 3.4.2.2). Only the first answer counts: our client asks once.
    mutating func clientExchangeAnswered(serverRxMTU: UInt16, localRxMTU: UInt16) {
        guard !exchangedByUs else { return }
        exchangedByUs = true
        mtu = ATTMTU.agreed(serverRxMTU, localRxMTU)
    }

    public var hasPendingIndication: Bool { pendingIndicationHandle != 0 }

    /// When the outstanding indication's 30-second transaction timer fires (nil if none).
    public var nextDeadline: UInt64? {
        hasPendingIndication && !isTimedOut ? pendingIndicationSentAt &+ ATTServer.transactionTimeout : nil
    }
}

/// One prepared write: the attribute, the offset and where its octets are in the queue.
public struct ATTPreparedWrite: Sendable, Equatable {
    public var handle: UInt16
    public var offset: UInt16
    var start: Int
    public internal(set) var length: Int
}

/// A link's prepare-write queue (Core 5.4 Vol 3 Part F 3.4.6.1): a server may bound it, answering
/// Prepare Queue Full (0x09) when a part does not fit.
public protocol ATTPrepareQueue {
    init()
    /// Entries queued.
    var count: Int { get }
    /// Entry `i` (0..<count).
    func entry(_ i: Int) -> ATTPreparedWrite
    /// Runs `body` with the queued value octets of entry `i`, in place.
    func withValue<R>(_ i: Int, _ body: (Span<UInt8>) -> R) -> R
    /// Queues a prepared write; false when entries or octets are exhausted (Prepare Queue Full).
    mutating func enqueue(handle: UInt16, offset: UInt16, value: Span<UInt8>) -> Bool
    mutating func removeAll()
}

/// No queue: every Prepare Write Request is answered Prepare Queue Full. For a server whose
/// `GATTServerFeatures` leave queued writes out, which answers them Request Not Supported before
/// ever reaching the queue: its links carry no queue memory (0.6 KB each with the standard one).
public struct ATTNoPrepareQueue: ATTPrepareQueue {
    public init() {}
    public var count: Int { 0 }
    public func entry(_ i: Int) -> ATTPreparedWrite { preconditionFailure("empty prepare queue") }
    public func withValue<R>(_ i: Int, _ body: (Span<UInt8>) -> R) -> R { preconditionFailure("empty prepare queue") }
    public mutating func enqueue(handle: UInt16, offset: UInt16, value: Span<UInt8>) -> Bool { false }
    public mutating func removeAll() {}
}

/// A queue of up to `capacity` prepared writes holding `octets` octets of values in all.
public struct ATTPreparedWrites<let capacity: Int, let octets: Int>: ATTPrepareQueue {
    var entries: InlineArray<capacity, ATTPreparedWrite>
    public private(set) var count = 0
    var bytes: InlineArray<octets, UInt8>
    var bytesUsed = 0

    public init() {
        entries = InlineArray(repeating: ATTPreparedWrite(handle: 0, offset: 0, start: 0, length: 0))
        bytes = InlineArray(repeating: 0)
    }

    public func entry(_ i: Int) -> ATTPreparedWrite { entries[i] }

    /// A part that continues the previous one (same handle, next offset) extends that entry instead
    /// of taking a new one: a client writing a long value sends exactly such a run (Core 5.4 Vol 3
    /// Part G 4.9.4), and at ATT_MTU 23 a 512-octet value takes 29 parts of 18, more entries than a
    /// small queue has although its bytes fit. Executing the merged entry writes the same octets.
    public mutating func enqueue(handle: UInt16, offset: UInt16, value: Span<UInt8>) -> Bool {
        guard bytesUsed + value.count <= octets else { return false }
        if count > 0 {
            let last = entries[count - 1]
            if last.handle == handle, Int(last.offset) + last.length == Int(offset),
               last.start + last.length == bytesUsed {
                for i in value.indices { bytes[bytesUsed + i] = value[i] }
                bytesUsed += value.count
                entries[count - 1].length += value.count
                return true
            }
        }
        guard count < capacity else { return false }
        entries[count] = ATTPreparedWrite(handle: handle, offset: offset, start: bytesUsed, length: value.count)
        for i in value.indices { bytes[bytesUsed + i] = value[i] }
        bytesUsed += value.count
        count += 1
        return true
    }

    public mutating func removeAll() {
        count = 0
        bytesUsed = 0
    }

    public func withValue<R>(_ i: Int, _ body: (Span<UInt8>) -> R) -> R {
        let e = entries[i]
        return body(value(e))
    }

    @_addressableSelf
    @_lifetime(borrow self)
    func value(_ e: ATTPreparedWrite) -> Span<UInt8> {
        bytes.span.extracting(e.start..<(e.start + e.length))
    }
}

/// Room for 8 prepared writes holding 512 octets (one maximum-length attribute). 8 entries are
/// plenty: consecutive parts of one long write share an entry (see `enqueue`), so only a reliable
/// write across several attributes takes more than one.
public typealias ATTStandardPrepareQueue = ATTPreparedWrites<8, 512>
/// A bearer with the standard queue.
public typealias ATTStandardBearer = ATTBearer<ATTStandardPrepareQueue>
