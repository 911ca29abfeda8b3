/// Per-connection ATT server state (Core 5.4 Vol 3 Part F 3.2.11, 3.3.2, 3.3.3): the MTU, the link's
/// security, the prepare-write queue and the one indication we may have outstanding. The connection
/// layer keeps one per link and hands it to `ATTServer.handle` with every PDU from that link.
///
/// - `prepareQueueCapacity`: prepared writes the queue holds (more get Prepare Queue Full).
/// - `prepareQueueBytes`: octets of queued values across all prepared writes.
public struct ATTBearer<let prepareQueueCapacity: Int, let prepareQueueBytes: Int> {
    /// ATT_MTU in use: 23 until an Exchange MTU succeeds (Part G 5.2.1).
    public internal(set) var mtu: UInt16 = ATTMTU.minimum
    /// An Exchange MTU already happened; the spec allows one per connection (Part F 3.4.2.1).
    public internal(set) var mtuExchanged = false
    /// Security the link has now; the connection layer updates it after encryption changes.
    public var security = ATTLinkSecurity()
    /// The indication awaiting its confirmation (Part F 3.4.7.2: only one at a time).
    public internal(set) var pendingIndicationHandle: UInt16 = 0
    public internal(set) var pendingIndicationSentAt: UInt64 = 0
    /// A transaction timed out: no more ATT PDUs may be sent on this bearer (Part F 3.3.3).
    public internal(set) var isTimedOut = false

    struct PreparedWrite {
        var handle: UInt16
        var offset: UInt16
        var start: Int
        var length: Int
    }

    var queue: InlineArray<prepareQueueCapacity, PreparedWrite>
    public internal(set) var queuedWrites = 0
    var queueBytes: InlineArray<prepareQueueBytes, UInt8>
    var queueBytesUsed = 0

    public init() {
        queue = InlineArray(repeating: PreparedWrite(handle: 0, offset: 0, start: 0, length: 0))
        queueBytes = InlineArray(repeating: 0)
    }

    public var hasPendingIndication: Bool { pendingIndicationHandle != 0 }

    /// When the outstanding indication's 30-second transaction timer fires (nil if none).
    public var nextDeadline: UInt64? {
        hasPendingIndication && !isTimedOut ? pendingIndicationSentAt &+ ATTServer.transactionTimeout : nil
    }

    /// Queues a prepared write; false when entries or bytes are exhausted.
    ///
    /// A part that continues the previous one (same handle, next offset) extends that entry instead
    /// of taking a new one: a client writing a long value sends exactly such a run (Core 5.4 Vol 3
    /// Part G 4.9.4), and at ATT_MTU 23 a 512-octet value takes 29 parts of 18, more entries than a
    /// small queue has although its bytes fit. Executing the merged entry writes the same octets.
    mutating func enqueue(handle: UInt16, offset: UInt16, value: Span<UInt8>) -> Bool {
        guard queueBytesUsed + value.count <= prepareQueueBytes else { return false }
        if queuedWrites > 0 {
            let last = queue[queuedWrites - 1]
            if last.handle == handle, Int(last.offset) + last.length == Int(offset),
               last.start + last.length == queueBytesUsed {
                for i in value.indices { queueBytes[queueBytesUsed + i] = value[i] }
                queueBytesUsed += value.count
                queue[queuedWrites - 1].length += value.count
                return true
            }
        }
        guard queuedWrites < prepareQueueCapacity else { return false }
        queue[queuedWrites] = PreparedWrite(handle: handle, offset: offset, start: queueBytesUsed, length: value.count)
        for i in value.indices { queueBytes[queueBytesUsed + i] = value[i] }
        queueBytesUsed += value.count
        queuedWrites += 1
        return true
    }

    mutating func clearQueue() {
        queuedWrites = 0
        queueBytesUsed = 0
    }

    /// The queued value octets of entry `i`.
    @_addressableSelf
    @_lifetime(borrow self)
    func queuedValue(_ i: Int) -> Span<UInt8> {
        let e = queue[i]
        return queueBytes.span.extracting(e.start..<(e.start + e.length))
    }
}

/// A bearer with room for 8 prepared writes holding 512 octets (one maximum-length attribute). 8
/// entries are plenty: consecutive parts of one long write share an entry (see `enqueue`), so only
/// a reliable write across several attributes takes more than one.
public typealias ATTStandardBearer = ATTBearer<8, 512>
