/// Why fragments could not be queued. Nothing is queued when any of these is thrown.
public enum ACLQueueError: Error, Sendable, Equatable {
    /// Not enough free slots for every fragment of the PDU (a PDU is queued whole or not at all).
    case full(needed: Int, free: Int)
    /// The link already holds its fair share of slots (see `ACLOutboundQueue.perLinkLimit`).
    case linkLimit(limit: Int)
    /// One H4 packet would not fit a slot: use a smaller data length or bigger slots.
    case packetTooLarge(length: Int, slotSize: Int)
    /// Bad handle, empty packet or a payload no basic header can describe.
    case invalidArgument
}

/// H4 ACL packets waiting for controller credits (Core 5.4 Vol 4 Part E 4.1.1), in `slots` fixed
/// slots of `slotSize` bytes each (one H4 packet per slot: 5 header bytes + the data length, so 32
/// for a 27-byte controller and 256 for 251).
///
/// Fairness policy:
/// - Within a link, packets leave in the order they were queued, so fragments of one PDU stay in
///   order and are never interleaved with another PDU of the same link (Vol 4 Part E 5.4.2).
/// - Across links, `drain` serves links round-robin by handle, one packet per turn: after sending on
///   handle H it sends next on the smallest queued handle greater than H, wrapping around. Packets of
///   different handles may interleave because the controller reassembles per handle.
/// - No link may hold more than `perLinkLimit` slots (by default three quarters of the queue), so a
///   link that produces faster than the air drains cannot take every slot from the others.
///
/// `drain` keeps sending while it holds both credits and packets: the wire is never left idle.
public struct ACLOutboundQueue<let slots: Int, let slotSize: Int> {
    struct Meta {
        var isUsed = false
        var handle: UInt16 = 0
        /// Queue order; compared with wrapping subtraction so it may run forever.
        var sequence: UInt32 = 0
    }

    var packets: InlineArray<slots, FixedBytes<slotSize>>
    var meta: InlineArray<slots, Meta>
    var nextSequence: UInt32 = 0
    var lastServed: UInt16? = nil

    public let perLinkLimit: Int
    /// Packets currently queued.
    public private(set) var count = 0
    /// Packets thrown away because their link was disconnected.
    public private(set) var droppedOnDisconnect = 0
    /// Packets thrown away by `drain` because the credit tracker did not know their handle.
    public private(set) var droppedUnknownHandle = 0
    /// Packets written by `drain` since creation.
    public private(set) var sent = 0

    public init(perLinkLimit: Int = max(1, slots - slots / 4)) {
        packets = InlineArray(repeating: FixedBytes<slotSize>())
        meta = InlineArray(repeating: Meta())
        self.perLinkLimit = min(max(1, perLinkLimit), slots)
    }

    public var isEmpty: Bool { count == 0 }
    public var freeSlots: Int { slots - count }

    @inline(__always)
    public func count(handle: UInt16) -> Int {
        // Inlined, like `check` and `nextSlot`: called from mutating methods, a read-only call made
        // the compiler copy the whole queue (4.4 KB for <16, 256>) to pass `self`.
        var n = 0
        for i in 0..<slots where meta[i].isUsed && meta[i].handle == handle { n += 1 }
        return n
    }

    @inline(__always)
    func check(handle: UInt16, adding n: Int) throws(ACLQueueError) {
        guard n <= freeSlots else { throw .full(needed: n, free: freeSlots) }
        guard count(handle: handle) + n <= perLinkLimit else { throw .linkLimit(limit: perLinkLimit) }
    }

    mutating func store(handle: UInt16) -> Int {
        var slot = 0
        while meta[slot].isUsed { slot += 1 }  // callers checked that a slot is free
        meta[slot] = Meta(isUsed: true, handle: handle, sequence: nextSequence)
        nextSequence &+= 1
        packets[slot].removeAll()
        count += 1
        return slot
    }

    /// Fragments one L2CAP PDU (`payload` on `channel`) for a controller that takes `maxDataLength`
    /// data bytes per packet and queues every fragment, or none. Returns the number queued.
    @discardableResult
    public mutating func enqueue(handle: UInt16, channel: L2CAPChannelID, payload: Span<UInt8>,
                                 maxDataLength: Int) throws(ACLQueueError) -> Int {
        guard var fragmenter = ACLFragmenter(handle: handle, channel: channel, payloadLength: payload.count,
                                             maxDataLength: maxDataLength)
        else { throw .invalidArgument }
        guard fragmenter.maxPacketLength <= slotSize else {
            throw .packetTooLarge(length: fragmenter.maxPacketLength, slotSize: slotSize)
        }
        let n = fragmenter.fragmentCount
        try check(handle: handle, adding: n)
        for _ in 0..<n {
            let slot = store(handle: handle)
            _ = fragmenter.writeNext(payload: payload, to: &packets[slot])
        }
        return n
    }

    /// Queues one already-built H4 ACL packet (indicator 0x02 included), e.g. from a caller's own
    /// `ACLFragmenter`. The handle is read from the packet.
    public mutating func enqueue(packet: Span<UInt8>) throws(ACLQueueError) {
        guard packet.count >= 1 + HCIACLDataHeader.size, packet[0] == H4PacketType.acl.rawValue else {
            throw .invalidArgument
        }
        guard packet.count <= slotSize else { throw .packetTooLarge(length: packet.count, slotSize: slotSize) }
        let handle = (UInt16(packet[1]) | UInt16(packet[2]) &<< 8) & 0x0FFF
        try check(handle: handle, adding: 1)
        let slot = store(handle: handle)
        packets[slot].append(contentsOf: packet)
    }

    /// The slot to send next under the round-robin policy, or nil when empty.
    // Mutating only to reach `self` by address: as a plain method, even inlined, it made the compiler
    // copy the whole queue (4.4 KB for <16, 256>) into a temporary on every call.
    mutating func nextSlot() -> Int? {
        // Pick the link: smallest queued handle after the last one served, else the smallest overall.
        var after: UInt16? = nil
        var lowest: UInt16? = nil
        for i in 0..<slots where meta[i].isUsed {
            let h = meta[i].handle
            if h < (lowest ?? .max) || lowest == nil { lowest = h }
            if let last = lastServed, h > last, h < (after ?? .max) || after == nil { after = h }
        }
        guard let link = after ?? lowest else { return nil }
        // Within the link, the oldest packet.
        var best: Int? = nil
        for i in 0..<slots where meta[i].isUsed && meta[i].handle == link {
            if let b = best {
                if Int32(bitPattern: meta[i].sequence &- meta[b].sequence) < 0 { best = i }
            } else {
                best = i
            }
        }
        return best
    }

    mutating func free(_ slot: Int) {
        meta[slot] = Meta()
        packets[slot].removeAll()
        count -= 1
    }

    /// Sends as many queued packets as `credits` allow, writing each whole H4 packet to `sink`.
    /// Returns the number written. Stops only when the queue is empty or no credit is left.
    @discardableResult
    public mutating func drain<let links: Int, S: ByteSink>(credits: inout ACLCredits<links>,
                                                           into sink: inout S) -> Int {
        drain(credits: &credits) { packet in sink.append(contentsOf: packet) }
    }

    /// As `drain(credits:into:)`, handing each H4 packet straight from its slot to `output` as one
    /// `send`, so nothing is copied on the way to the wire.
    @discardableResult
    public mutating func drain<let links: Int, O: H4Output>(credits: inout ACLCredits<links>,
                                                           to output: inout O) -> Int {
        drain(credits: &credits) { packet in output.send(h4: packet) }
    }

    mutating func drain<let links: Int>(credits: inout ACLCredits<links>, _ send: (Span<UInt8>) -> Void) -> Int {
        var written = 0
        while let slot = nextSlot() {
            let handle = meta[slot].handle
            switch credits.consume(handle: handle) {
            case .granted:
                send(packets[slot].span)
                free(slot)
                lastServed = handle
                written += 1
            case .noCredits:
                sent += written
                return written
            case .unknownHandle:
                // The link is gone (or was never tracked): its packets can never be sent.
                droppedUnknownHandle += dropAll(handle: handle)
            }
        }
        sent += written
        return written
    }

    /// Drops every packet queued for `handle` (on Disconnection Complete). Returns how many.
    @discardableResult
    public mutating func removeAll(handle: UInt16) -> Int {
        let n = dropAll(handle: handle)
        droppedOnDisconnect += n
        return n
    }

    mutating func dropAll(handle: UInt16) -> Int {
        var n = 0
        for i in 0..<slots where meta[i].isUsed && meta[i].handle == handle {
            free(i)
            n += 1
        }
        return n
    }
}
