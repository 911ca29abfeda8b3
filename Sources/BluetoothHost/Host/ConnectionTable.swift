/// Our role on a link, as LE Connection Complete reports it (Core 5.4 Vol 4 Part E 7.7.65.1).
public typealias ConnectionRole = HCIRole

/// Per-link state owned by layers above L2CAP (e.g. the ATT bearer). The table creates it with
/// `init()` when a link comes up and hands it back when the link goes down.
public protocol ConnectionExtra {
    init()
}

/// For tables that need no upper-layer state.
public struct NoConnectionExtra: ConnectionExtra, Sendable, Equatable {
    public init() {}
}

/// Connection timing as LE Connection Complete / Connection Update Complete report it
/// (Core 5.4 Vol 4 Part E 7.7.65.1, 7.7.65.3).
public struct ConnectionTiming: Sendable, Equatable {
    /// Connection interval in units of 1.25 ms.
    public var interval: UInt16
    /// Peripheral latency in connection events.
    public var latency: UInt16
    /// Supervision timeout in units of 10 ms.
    public var supervisionTimeout: UInt16

    public init(interval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }
}

/// The link-layer PDU sizes in use on a link, each direction: 27 octets / 328 µs on LE 1M until the
/// Data Length Update procedure changes them (Core 5.4 Vol 6 Part B 4.5.10, 5.1.9), as LE Data Length
/// Change reports (Vol 4 Part E 7.7.65.7).
public struct LinkDataLength: Sendable, Equatable {
    public var maxTxOctets: UInt16
    public var maxTxTime: UInt16
    public var maxRxOctets: UInt16
    public var maxRxTime: UInt16

    public init(maxTxOctets: UInt16, maxTxTime: UInt16, maxRxOctets: UInt16, maxRxTime: UInt16) {
        self.maxTxOctets = maxTxOctets
        self.maxTxTime = maxTxTime
        self.maxRxOctets = maxRxOctets
        self.maxRxTime = maxRxTime
    }

    /// What every link starts with (Vol 6 Part B 4.5.10).
    public static var initial: LinkDataLength { LinkDataLength(maxTxOctets: 27, maxTxTime: 328, maxRxOctets: 27, maxRxTime: 328) }
}

/// One live LE link: identity, timing, inbound reassembly and upper-layer state.
public struct Connection<Reassembler: L2CAPReassembling, Extra: ConnectionExtra> {
    public let handle: UInt16
    public let role: ConnectionRole
    public let peer: DeviceAddress
    public var timing: ConnectionTiming
    public var dataLength = LinkDataLength.initial
    public var phy = LinkPHY.initial
    /// LE Set PHY commands sent for this link, and whether one waits (`LEStack+PHY`): the central's
    /// first until the link's data length procedure has ended, the peripheral's first to leave the
    /// central time to start the procedure, or one that lost a collision until the other procedure ended.
    public var phyRequests: UInt8 = 0
    public var phyRequestPending = false
    /// The waiting request goes out when the link's other LL procedure completes (LE Data Length
    /// Change, LE Connection Update Complete), or at `phyRequestAt` (ms) if none does first.
    public var phyRequestAfterProcedure = false
    public var reassembler: Reassembler
    /// Identifiers and outstanding requests of the LE signalling channel.
    public var signaling: L2CAPSignalingState
    public var extra: Extra
    /// Last, and 8-aligned, so the link's size is a multiple of its alignment (its stride): Swift
    /// 6.3 addresses an `InlineArray` element whose size is not its stride (the table's `Link?`)
    /// as if 1-aligned, and a Cortex-M0 (no unaligned access) then reads and writes every field of
    /// every link an octet at a time (`Tools/firmware build beacon@microbit`, docs/footprint.md).
    public var phyRequestAt: UInt64 = 0

    public init(handle: UInt16, role: ConnectionRole, peer: DeviceAddress, timing: ConnectionTiming) {
        self.handle = handle
        self.role = role
        self.peer = peer
        self.timing = timing
        reassembler = Reassembler()
        signaling = L2CAPSignalingState()
        extra = Extra()
    }
}

public enum ConnectionTableError: Error, Sendable, Equatable {
    /// No free entry: the caller must disconnect this handle (Core 5.4 Vol 4 Part E 7.1.6) since the
    /// host cannot serve it.
    case full(capacity: Int)
    /// The handle is already in the table (a controller bug or a missed Disconnection Complete).
    case duplicateHandle(UInt16)
    /// Outside 0x0000…0x0EFF (Core 5.4 Vol 4 Part E 5.4.2).
    case invalidHandle(UInt16)
    /// No link with this handle is in the table (`serverLink(handle:)`): never up, or gone.
    case unknownHandle(UInt16)
}

/// What feeding an inbound ACL packet to the table did.
public enum ConnectionReceiveOutcome: Sendable, Equatable {
    /// A fragment was stored; the PDU is not complete yet.
    case incomplete
    /// A whole PDU on this channel was handed to `deliver`.
    case delivered(channel: L2CAPChannelID, length: Int)
    /// No link with this handle (e.g. data racing a Disconnection Complete): dropped.
    case unknownHandle(UInt16)
    /// The reassembler refused the fragment; the PDU was dropped and the link stays up.
    case dropped(ACLReassemblyError)
}

/// A connection table whose links reassemble inbound L2CAP payloads of up to `pduCapacity` octets.
public typealias ConnectionTable<let capacity: Int, let pduCapacity: Int, Extra: ConnectionExtra> =
    LinkTable<capacity, ACLReassembler<pduCapacity>, Extra>

/// Fixed-capacity storage for live links, looked up by connection handle. `capacity` is the number
/// of simultaneous links (see `StandardConnectionTable`), `Reassembler` each link's inbound L2CAP
/// reassembly (`ACLReassembler<n>`: payloads of up to n octets, chosen by the application through
/// `LEApplication.LinkBuffers`), `Extra` the upper-layer per-link state.
public struct LinkTable<let capacity: Int, Reassembler: L2CAPReassembling, Extra: ConnectionExtra> {
    public typealias Link = Connection<Reassembler, Extra>

    /// Each position's link; whether there is one, `handles` alone says. A vacant position keeps
    /// the octets of the link it held last (a blank link at first), never read. Not optional: Swift
    /// 6.3 builds a `nil` link in a temporary as large as a link (760 octets in the wearable) and
    /// copies it over the slot, and checks the tag at every `entries[i]!` (docs/footprint.md).
    var entries: InlineArray<capacity, Link>
    /// Each position's handle, `vacant` where there is no link. Lookups scan these few octets, not
    /// the links: a scan over `entries` made the compiler copy the whole table (every link's
    /// reassembly buffer and ATT bearer) into a temporary on each lookup.
    var handles: InlineArray<capacity, UInt16>
    /// Not a connection handle (those are 0x0000...0x0EFF, Core 5.4 Vol 4 Part E 5.4.2).
    static var vacant: UInt16 { 0xFFFF }
    public private(set) var count = 0
    /// Inbound packets whose handle had no entry.
    public private(set) var unknownHandlePackets = 0

    public init() {
        entries = InlineArray(repeating: Self.blank)
        handles = InlineArray(repeating: Self.vacant)
    }

    /// What a position that never held a link holds: zero octets (each number 0, each enum its first
    /// case), never read. `initializeInPlace` writes it with one `memset` where a link built by
    /// `init(handle:...)` cost the Cortex-M0 beacon 208 B of stores. A link is plain data (the
    /// in-place construction requires it of the whole stack), so any octets are some link.
    static var blank: Link {
        var link = Link(handle: vacant, role: .central,
                        peer: DeviceAddress(type: .publicDevice, address: BDAddress(bytes: InlineArray(repeating: 0))),
                        timing: ConnectionTiming(interval: 0, latency: 0, supervisionTimeout: 0))
        withUnsafeMutableBytes(of: &link) { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
        return link
    }

    public var isFull: Bool { count == capacity }
    public var isEmpty: Bool { count == 0 }

    @inline(__always)
    func index(of handle: UInt16) -> Int? {
        guard handle != Self.vacant else { return nil }
        for i in 0..<capacity where handles[i] == handle { return i }
        return nil
    }

    public func contains(handle: UInt16) -> Bool { index(of: handle) != nil }

    /// `index(of:)` for callers that hold the table mutably (its own mutating methods, `LEStack`):
    /// there a call to a read-only method, even inlined, made the compiler copy the whole table
    /// (every link's reassembly buffer and bearer: 2.9 KB with four links) into the caller's frame
    /// first (Swift 6.3, Embedded, -Osize; `Tools/firmware frames`).
    @inline(__always)
    mutating func slot(of handle: UInt16) -> Int? {
        guard handle != Self.vacant else { return nil }
        for i in 0..<capacity where handles[i] == handle { return i }
        return nil
    }

    /// `link`'s position when the table still holds it there: the slot a caller was handed with the
    /// link (`ConnectionSummary.slot`, from `receive`) checked in one comparison instead of searched
    /// for again. Nil when that link has gone.
    @inline(__always)
    mutating func slot(of link: ConnectionSummary) -> Int? {
        guard link.slot >= 0 && link.slot < capacity, handles[link.slot] == link.handle else { return nil }
        return link.slot
    }

    /// `update(handle:_:)` for a link the caller was handed (see `slot(of:)` for a summary).
    @inline(__always)
    mutating func update<R>(_ link: ConnectionSummary, _ body: (inout Link) -> R) -> R? {
        guard let i = slot(of: link) else { return nil }
        return body(&entries[i])
    }

    /// `handle(at:)` for callers that hold the table mutably (see `slot(of:)`).
    @inline(__always)
    mutating func handle(atSlot position: Int) -> UInt16? {
        guard position >= 0 && position < capacity, handles[position] != Self.vacant else { return nil }
        return handles[position]
    }

    /// Whether `position` holds a link, without touching the link (reading `entries[position]`
    /// copies it).
    @inline(__always)
    func isOccupied(_ position: Int) -> Bool { handles[position] != Self.vacant }

    /// Adds a link on LE (Enhanced) Connection Complete with success status; returns its slot.
    @discardableResult
    public mutating func insert(handle: UInt16, role: ConnectionRole, peer: DeviceAddress,
                                timing: ConnectionTiming) throws(ConnectionTableError) -> Int {
        guard handle <= HCIACLDataHeader.maxHandle else { throw .invalidHandle(handle) }
        guard slot(of: handle) == nil else { throw .duplicateHandle(handle) }
        for i in 0..<capacity where handles[i] == Self.vacant {
            entries[i] = Link(handle: handle, role: role, peer: peer, timing: timing)
            handles[i] = handle
            count += 1
            return i
        }
        throw .full(capacity: capacity)
    }

    /// Removes a link on Disconnection Complete and returns it, with its upper-layer state, so the
    /// caller can release what it held. Nil if the handle was unknown.
    public mutating func remove(handle: UInt16) -> Link? {
        guard let i = slot(of: handle) else { return nil }
        let link = entries[i]
        vacate(i)
        return link
    }

    /// Removes a link on Disconnection Complete without handing it back: false if the handle was
    /// unknown. For a caller with nothing to release (`LEStack.linkDown`), whose frame then holds
    /// no copy of the link.
    @discardableResult
    public mutating func discard(handle: UInt16) -> Bool {
        guard let i = slot(of: handle) else { return false }
        vacate(i)
        return true
    }

    /// Empties position `i`: its handle only (the link's octets stay, unread; see `entries`).
    mutating func vacate(_ i: Int) {
        handles[i] = Self.vacant
        count -= 1
    }

    /// A copy of the link (use `update` to change it in place).
    public subscript(handle handle: UInt16) -> Link? {
        guard let i = index(of: handle) else { return nil }
        return entries[i]
    }

    /// Runs `body` on the stored link for `handle`; nil when there is none.
    public mutating func update<R>(handle: UInt16, _ body: (inout Link) -> R) -> R? {
        guard let i = slot(of: handle) else { return nil }
        // `&entries[i]` mutates the stored link in place (no copy of its reassembly buffer).
        return body(&entries[i])
    }

    /// The link `handle` as the GATT database and the ATT server name it (`GATTServerLink`): its
    /// handle, and the position this table keeps it at, which selects its per-link values. The table
    /// owns that numbering, so only it hands the position out. Throws `.unknownHandle` when no link
    /// has this handle.
    public func serverLink(handle: UInt16) throws(ConnectionTableError) -> GATTServerLink {
        guard let i = index(of: handle) else { throw .unknownHandle(handle) }
        return GATTServerLink(handle: handle, slot: i)
    }

    /// The handle in table position `position` (0..<capacity), for iterating without an array.
    public func handle(at position: Int) -> UInt16? {
        guard position >= 0 && position < capacity, handles[position] != Self.vacant else { return nil }
        return handles[position]
    }

    /// Feeds one inbound ACL packet to its link's reassembler; when it completes a PDU, calls
    /// `deliver` with the link, the channel and the payload (valid only during the call).
    public mutating func receive(
        _ packet: borrowing HCIACLDataPacket,
        deliver: (_ extra: inout Extra, _ link: ConnectionSummary, _ channel: L2CAPChannelID,
                  _ payload: Span<UInt8>) -> Void
    ) -> ConnectionReceiveOutcome {
        let handle = packet.handle
        guard let i = slot(of: handle) else {
            unknownHandlePackets &+= 1
            return .unknownHandle(handle)
        }
        return Self.feed(&entries[i], slot: i, packet, deliver)
    }

    static func feed(
        _ link: inout Link, slot: Int, _ packet: borrowing HCIACLDataPacket,
        _ deliver: (inout Extra, ConnectionSummary, L2CAPChannelID, Span<UInt8>) -> Void
    ) -> ConnectionReceiveOutcome {
        let result: ACLReassemblyResult
        do {
            result = try link.reassembler.receive(packet)
        } catch {
            return .dropped(error)
        }
        guard case .complete(let channel, let length) = result else { return .incomplete }
        let summary = ConnectionSummary(handle: link.handle, role: link.role, peer: link.peer, timing: link.timing, slot: slot)
        // Disjoint stored properties of one inout link: the payload borrows the reassembler while
        // the upper layer mutates its own state.
        link.reassembler.withPayload(&link.extra) { extra, payload in deliver(&extra, summary, channel, payload) }
        return .delivered(channel: channel, length: length)
    }
}

/// The table the host uses by default: 8 links (Zephyr's hci_uart may be built for up to 16) and
/// inbound PDUs up to an ATT MTU of 247, which a 251-byte LE data length carries in one packet.
public typealias StandardConnectionTable<Extra: ConnectionExtra> = ConnectionTable<8, 247, Extra>

/// The identity and timing of a link, handed to upper layers with each PDU.
public struct ConnectionSummary: Sendable, Equatable {
    public let handle: UInt16
    public let role: ConnectionRole
    public let peer: DeviceAddress
    public let timing: ConnectionTiming
    /// The link's position in the connection table (0..<capacity), stable while the link lives, so
    /// that the stack reaches the link again without a search (`LinkTable.slot(of:)`). Internal: a
    /// link is named by `handle` at every interface, and no application depends on where the stack
    /// keeps it.
    let slot: Int

    public init(handle: UInt16, role: ConnectionRole, peer: DeviceAddress, timing: ConnectionTiming) {
        self.init(handle: handle, role: role, peer: peer, timing: timing, slot: 0)
    }

    init(handle: UInt16, role: ConnectionRole, peer: DeviceAddress, timing: ConnectionTiming, slot: Int) {
        self.handle = handle
        self.role = role
        self.peer = peer
        self.timing = timing
        self.slot = slot
    }
}

extension LinkTable {
    /// `init()` for memory that holds no table yet, one position at a time (`BluetoothStack.initialize`):
    /// `InlineArray(repeating: nil)` composed the links (reassembly buffer and ATT bearer each) in
    /// temporaries first, 6.2 KB of stack for the beacon's two; the blank links are zero octets
    /// (`blank`). `BluetoothStackInPlaceTests` checks this leaves no property unset.
    @inline(never)
    mutating func initializeInPlace() {
        withUnsafeMutablePointer(to: &entries) { p in
            _ = UnsafeMutableRawPointer(p).initializeMemory(
                as: UInt8.self, repeating: 0, count: MemoryLayout<InlineArray<capacity, Link>>.size)
        }
        for i in 0..<capacity { handles[i] = Self.vacant }
        count = 0
        unknownHandlePackets = 0
    }
}
