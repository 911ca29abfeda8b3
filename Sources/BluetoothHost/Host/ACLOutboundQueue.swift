/// Why a PDU could not be queued. Nothing is queued when any of these is thrown.
public enum ACLQueueError: Error, Sendable, Equatable {
    /// Not enough free octets for the PDU (a PDU is queued whole or not at all).
    case full(needed: Int, free: Int)
    /// The link already holds its fair share of the queue (see `ACLOutboundQueue.perLinkLimit`).
    case linkLimit(limit: Int)
    /// Bad handle, or a payload no basic header can describe.
    case invalidArgument
}

/// An outbound ACL queue as `StackControlOf` uses it: `ACLOutboundQueue<n>`, with the capacity an
/// application chooses (`LEApplication.ControlBuffers`).
public protocol ACLOutboundQueueing {
    init()
    static var totalOctets: Int { get }
    static func footprint(payloadLength: Int) -> Int
    /// PDUs queued (including one partly sent).
    var count: Int { get }
    mutating func enqueue(handle: UInt16, channel: L2CAPChannelID, payload: Span<UInt8>) throws(ACLQueueError)
    @discardableResult
    mutating func drain<C: ACLCreditLedger, O: H4Output>(credits: inout C, to output: inout O) -> Int
    @discardableResult
    mutating func removeAll(handle: UInt16) -> Int
}

/// L2CAP PDUs waiting for controller credits (Core 5.4 Vol 4 Part E 4.1.1), packed back to back in
/// `octets` of storage and cut into ACL fragments only when a credit is there to send one.
///
/// Why whole PDUs rather than ready-made fragments: a controller with 27-octet buffers (Zephyr's
/// default) turns a 247-octet ATT PDU into ten packets, and one fixed slot per packet sized for
/// 251-octet buffers wastes nine tenths of the RAM on it. Stored whole, a PDU costs its own length
/// plus an 8-octet record header, whatever the controller's buffer size.
///
/// Record layout: `[handle][channel][payload length][B-frame octets sent]` (16 bits each,
/// little-endian), then the payload.
///
/// Fairness policy:
/// - Within a link, PDUs leave in the order they were queued and one PDU's fragments are never
///   interleaved with another PDU of the same link (Vol 4 Part E 5.4.2).
/// - Across links, `drain` serves links round-robin by handle, one fragment per turn: after sending
///   on handle H it sends next on the smallest queued handle greater than H, wrapping around.
///   Fragments of different handles may interleave because the controller reassembles per handle.
/// - No link may hold more than `perLinkLimit` octets (by default three quarters of the queue), so a
///   link that produces faster than the air drains cannot take all the room from the others.
///
/// `drain` keeps sending while it holds both credits and data: the wire is never left idle.
public struct ACLOutboundQueue<let octets: Int>: ACLOutboundQueueing {
    static var recordHeader: Int { 8 }

    var storage: InlineArray<octets, UInt8>
    /// Octets in use; records start at 0 and are contiguous, oldest first.
    public private(set) var usedOctets = 0
    var lastServed: UInt16? = nil

    public let perLinkLimit: Int
    /// PDUs queued (including one partly sent).
    public private(set) var count = 0
    /// PDUs thrown away because their link was disconnected.
    public private(set) var droppedOnDisconnect = 0
    /// PDUs thrown away by `drain` because the credit tracker did not know their handle.
    public private(set) var droppedUnknownHandle = 0
    /// ACL packets written by `drain` since creation.
    public private(set) var sent = 0

    public init(perLinkLimit: Int = max(1, octets - octets / 4)) {
        storage = InlineArray(repeating: 0)
        self.perLinkLimit = min(max(1, perLinkLimit), octets)
    }

    public init() { self.init(perLinkLimit: max(1, octets - octets / 4)) }

    public static var totalOctets: Int { octets }
    public var isEmpty: Bool { count == 0 }
    public var freeOctets: Int { octets - usedOctets }

    /// The room a PDU of `payloadLength` octets takes in the queue.
    public static func footprint(payloadLength: Int) -> Int { recordHeader + payloadLength }

    /// PDUs queued for `handle`.
    public func count(handle: UInt16) -> Int {
        let bytes = storage.span
        var n = 0
        var offset = 0
        while offset < usedOctets {
            if Self.u16(bytes, offset) == handle { n += 1 }
            offset = Self.next(bytes, after: offset)
        }
        return n
    }

    /// Octets queued for `handle`, record headers included.
    public func queuedOctets(handle: UInt16) -> Int { Self.queuedOctets(handle: handle, in: storage.span, used: usedOctets) }

    static func queuedOctets(handle: UInt16, in bytes: Span<UInt8>, used: Int) -> Int {
        var n = 0
        var offset = 0
        while offset < used {
            let end = next(bytes, after: offset)
            if u16(bytes, offset) == handle { n &+= end &- offset }
            offset = end
        }
        return n
    }

    /// Queues one L2CAP PDU (`payload` on `channel`) for `handle`, whole, or throws and queues nothing.
    public mutating func enqueue(handle: UInt16, channel: L2CAPChannelID, payload: Span<UInt8>) throws(ACLQueueError) {
        guard handle <= HCIACLDataHeader.maxHandle, payload.count <= ACLFragmenter.maxPayload else {
            throw .invalidArgument
        }
        let needed = Self.footprint(payloadLength: payload.count)
        guard needed <= freeOctets else { throw .full(needed: needed, free: freeOctets) }
        guard Self.queuedOctets(handle: handle, in: storage.span, used: usedOctets) &+ needed <= perLinkLimit else { throw .linkLimit(limit: perLinkLimit) }
        // Offsets within the queue and counts of PDUs in it, below `octets`: the sums cannot
        // overflow, unchecked (the stores stay checked).
        var o = usedOctets
        setU16(handle, at: o)
        setU16(channel.rawValue, at: o &+ 2)
        setU16(UInt16(truncatingIfNeeded: payload.count), at: o &+ 4)
        setU16(0, at: o &+ 6)
        o &+= Self.recordHeader
        // Through a span, so the optimiser makes one block copy of the loop.
        var bytes = storage.mutableSpan
        for i in 0..<payload.count { bytes[o &+ i] = payload[i] }
        usedOctets = o &+ payload.count
        count &+= 1
    }

    /// The record to send from next under the round-robin policy, or nil when empty.
    // Mutating only to reach `storage` by address (see `u16`): as a plain method it made the compiler
    // copy the whole queue into a temporary for every packet sent.
    mutating func nextRecord() -> Int? {
        // Pick the link: smallest queued handle after the last one served, else the smallest overall.
        var after: UInt16? = nil
        var lowest: UInt16 = .max
        var offset = 0
        while offset < usedOctets {
            let h = Self.u16(storage.span, offset)
            if h < lowest { lowest = h }
            if let last = lastServed, h > last, h < (after ?? .max) { after = h }
            offset = Self.next(storage.span, after: offset)
        }
        guard usedOctets > 0 else { return nil }
        // Within the link, the oldest PDU: the first record with that handle.
        let link = after ?? lowest
        offset = 0
        while Self.u16(storage.span, offset) != link { offset = Self.next(storage.span, after: offset) }
        return offset
    }

    /// Sends as many ACL packets as `credits` allow, writing each whole H4 packet to `sink`, cutting
    /// PDUs to the controller's LE ACL data length (27 if it was never read). Returns the number
    /// written. Stops only when the queue is empty or no credit is left.
    @discardableResult
    public mutating func drain<C: ACLCreditLedger, S: ByteSink>(credits: inout C, into sink: inout S) -> Int {
        drain(credits: &credits) { fragmenter, payload in _ = fragmenter.writeNext(payload: payload, to: &sink) }
    }

    /// As `drain(credits:into:)`, handing each H4 packet to `output` as one `send`: the packet is
    /// built in one buffer here, with no copy of `output` and no byte-by-byte splitting downstream.
    @discardableResult
    public mutating func drain<C: ACLCreditLedger, O: H4Output>(credits: inout C, to output: inout O) -> Int {
        // Indicator, ACL header and up to 255 data octets (LE ACL data length is at most 251).
        var packet = FixedBytes<260>()
        return drain(credits: &credits) { fragmenter, payload in
            packet.removeAll()
            _ = fragmenter.writeNext(payload: payload, to: &packet)
            output.send(h4: packet.span)
        }
    }

    mutating func drain<C: ACLCreditLedger>(credits: inout C, _ write: (inout ACLFragmenter, Span<UInt8>) -> Void) -> Int {
        let dataLength = credits.maxDataLength > 0 ? credits.maxDataLength : 27
        var written = 0
        while let record = nextRecord() {
            let handle = Self.u16(storage.span, record)
            switch credits.consume(handle: handle) {
            case .granted:
                // A record's offset is below `octets` and its fields 16-bit: unchecked sums, as in
                // `next` (the reads and the payload's range stay checked).
                let length = Int(Self.u16(storage.span, record &+ 4))
                let start = record &+ Self.recordHeader
                var fragmenter = ACLFragmenter(
                    handle: handle, channel: L2CAPChannelID(rawValue: Self.u16(storage.span, record &+ 2)),
                    payloadLength: length, maxDataLength: dataLength, offset: Int(Self.u16(storage.span, record &+ 6)))
                write(&fragmenter, storage.span.extracting(start..<(start &+ length)))
                if fragmenter.isFinished {
                    remove(record)
                } else {
                    setU16(UInt16(truncatingIfNeeded: fragmenter.offset), at: record &+ 6)
                }
                lastServed = handle
                written &+= 1
            case .noCredits:
                sent &+= written
                return written
            case .unknownHandle:
                // The link is gone (or was never tracked): its PDUs can never be sent.
                droppedUnknownHandle &+= dropAll(handle: handle)
            }
        }
        sent &+= written
        return written
    }

    /// Drops every PDU queued for `handle` (on Disconnection Complete). Returns how many.
    @discardableResult
    public mutating func removeAll(handle: UInt16) -> Int {
        let n = dropAll(handle: handle)
        droppedOnDisconnect &+= n
        return n
    }

    mutating func dropAll(handle: UInt16) -> Int {
        var n = 0
        var offset = 0
        while offset < usedOctets {
            if Self.u16(storage.span, offset) == handle {
                remove(offset)
                n &+= 1
            } else {
                offset = Self.next(storage.span, after: offset)
            }
        }
        return n
    }

    /// Removes the record at `offset`, moving the later ones down.
    mutating func remove(_ offset: Int) {
        let end = Self.next(storage.span, after: offset)
        let tail = usedOctets &- end
        // Element by element on purpose: a span or pointer into inline storage can, with Swift 6.3,
        // end up addressing a temporary copy (see the README's note on the span miscompile).
        // Offsets below `octets` + 65,535: unchecked sums, checked indices.
        for i in 0..<tail { storage[offset &+ i] = storage[end &+ i] }
        usedOctets &-= end &- offset
        count &-= 1
    }

    // Record fields are read through a span of `storage` taken by the caller, never through a
    // read-only method on `self`: from the mutating paths (enqueue, drain) such a call made the
    // compiler copy the whole queue into a temporary, once per record visited.
    // Offsets stay below capacity + 65,535: the sums cannot overflow (the reads stay checked).
    static func next(_ bytes: Span<UInt8>, after offset: Int) -> Int { offset &+ recordHeader &+ Int(u16(bytes, offset &+ 4)) }

    static func u16(_ bytes: Span<UInt8>, _ offset: Int) -> UInt16 { UInt16(bytes[offset]) | UInt16(bytes[offset &+ 1]) &<< 8 }

    mutating func setU16(_ value: UInt16, at offset: Int) {
        storage[offset] = UInt8(truncatingIfNeeded: value)
        storage[offset &+ 1] = UInt8(truncatingIfNeeded: value &>> 8)
    }
}
