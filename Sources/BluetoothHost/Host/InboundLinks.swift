/// How the stack treats links that centrals open to us (we are peripheral on them): how many it
/// accepts, and how long it keeps one on which the central says nothing.
///
/// Why: a controller has a handful of links (four on the wearable). Centrals that connect and then
/// stay silent, reconnecting whenever dropped, otherwise take every one of them: no other central
/// can read us, and our own central role can connect to nobody. Neither the Core nor GAP bounds an
/// inbound link's silence (the supervision timeout only ends links whose radio went away, Core 5.4
/// Vol 6 Part B 4.5.2), so the host does.
public struct InboundLinkPolicy: Sendable, Equatable {
    /// Links kept for our central role: at most `links - reservedForCentral` peripheral links (and
    /// at least one) are accepted; past that, advertising stays off (`StackControl.acceptsInboundLinks`) and a central
    /// that connects anyway is disconnected at once (0x14, low resources).
    public var reservedForCentral: Int
    /// An inbound link on which the central sent no L2CAP PDU (an ATT request or command, or
    /// signalling) for this many milliseconds is disconnected (0x13); nil: never.
    public var idleBound: UInt64?
    /// A central whose link was dropped idle without it ever sending a PDU is refused (disconnected
    /// at once, 0x14) when it reconnects within this many milliseconds.
    public var refuseSilentFor: UInt64

    public init(reservedForCentral: Int, idleBound: UInt64?, refuseSilentFor: UInt64) {
        self.reservedForCentral = reservedForCentral
        self.idleBound = idleBound
        self.refuseSilentFor = refuseSilentFor
    }

    /// Every link a central opens is accepted and kept as long as it lives: the stack's behaviour
    /// for applications that say nothing else (a beacon, a test server).
    public static var open: InboundLinkPolicy { InboundLinkPolicy(reservedForCentral: 0, idleBound: nil, refuseSilentFor: 0) }
}

/// A list of centrals refused until a deadline (`LEApplication.RefusedCentrals`).
public protocol SilentCentralMemory {
    /// How many it remembers; 0: none (only for a policy that refuses no one).
    static var capacity: Int { get }
    init()
    /// Whether `peer` is refused at `now`.
    func refuses(_ peer: DeviceAddress, now: UInt64) -> Bool
    /// Refuses `peer` until `deadline`.
    mutating func refuse(_ peer: DeviceAddress, until deadline: UInt64)
}

/// No list, no octets: for an application whose `inboundLinks` policy refuses no one (`.open`,
/// a venue beacon), so its stack value does not carry `SilentCentrals`' 120 octets unused.
public struct NoSilentCentrals: SilentCentralMemory, Sendable {
    public static var capacity: Int { 0 }
    public init() {}
    public func refuses(_ peer: DeviceAddress, now: UInt64) -> Bool { false }
    public mutating func refuse(_ peer: DeviceAddress, until deadline: UInt64) {}
}

/// The centrals refused for a while after their silent link was dropped (`InboundLinkPolicy.refuseSilentFor`).
/// Fixed size: when full, the entry that expires first makes room.
public struct SilentCentrals: SilentCentralMemory, Sendable {
    public static var capacity: Int { 8 }
    var addresses: InlineArray<8, DeviceAddress?>
    var until: InlineArray<8, UInt64>

    public init() {
        addresses = InlineArray(repeating: nil)
        until = InlineArray(repeating: 0)
    }

    /// Whether `peer` is refused at `now`.
    public func refuses(_ peer: DeviceAddress, now: UInt64) -> Bool {
        for i in 0..<Self.capacity where until[i] > now && addresses[i] == peer { return true }
        return false
    }

    /// Refuses `peer` until `deadline`.
    public mutating func refuse(_ peer: DeviceAddress, until deadline: UInt64) {
        var slot = 0
        for i in 0..<Self.capacity {
            if addresses[i] == peer { slot = i; break }
            if until[i] < until[slot] { slot = i }
        }
        addresses[slot] = peer
        until[slot] = deadline
    }

    /// How many are refused at `now`.
    public func count(now: UInt64) -> Int {
        var n = 0
        for i in 0..<Self.capacity where until[i] > now { n += 1 }
        return n
    }
}

extension LEStack {
    /// Whether the application's policy is `.open`: a constant after specialisation, so an
    /// application that admits every link and keeps it (a beacon) links none of the quota, refusal
    /// and idle code below. Under `.open` the quota is every link, so a central is admitted whenever
    /// the table has room (`linkUp` refuses one that finds it full), and nothing is ever refused.
    static var opensEveryLink: Bool {
        App.inboundLinks.reservedForCentral == 0 && App.inboundLinks.idleBound == nil && App.inboundLinks.refuseSilentFor == 0
    }

    /// The most peripheral links the policy accepts: never none, since a device that advertises
    /// connectably must be connectable (a firmware sensor may ask for all its links as central).
    static var inboundQuota: Int { max(1, links - App.inboundLinks.reservedForCentral) }

    /// Live peripheral links not already being closed by us.
    mutating func openInboundLinks() -> Int {
        var n = 0
        for position in 0..<links where connections.isOccupied(position) {
            // Read in place (see `nextDeadline`): a copy of the link is its buffers.
            if connections.entries[position].role == .peripheral, !connections.entries[position].extra.closing { n += 1 }
        }
        return n
    }

    /// Peripheral links in the table, those being closed included: each holds a slot until its
    /// Disconnection Complete, which takes connection events (seconds, when the central's side
    /// ends by supervision timeout).
    mutating func inboundLinksInTable() -> Int {
        var n = 0
        for position in 0..<links where connections.isOccupied(position) {
            if connections.entries[position].role == .peripheral { n += 1 }
        }
        return n
    }

    mutating func updateInboundRoom() {
        // Room is a place under the quota counting the links being closed too: a refused central
        // still holds its slot until the link is gone, and centrals refused one after another would
        // otherwise fill the slots kept for our central role (seen on Zephyr's controller: four
        // refused silent centrals closing at once, and our own link to a phone then found no slot).
        // Advertising stays off meanwhile; each enable lets one central in, so the peripheral links
        // in the table never pass the quota. A central that connects when the link table has no
        // free slot is refused before the application hears of it (`linkUp`).
        if Self.opensEveryLink { return control.acceptsInboundLinks = !connections.isFull }
        control.acceptsInboundLinks = inboundLinksInTable() < Self.inboundQuota && !connections.isFull
    }

    /// A central connected to us: kept, or disconnected at once when over the quota or refused.
    /// Returns false when refused. The link is in the table either way, so its Disconnection
    /// Complete is accounted like any other.
    mutating func admitInbound(handle: UInt16, peer: DeviceAddress) -> Bool {
        if Self.opensEveryLink { return true }
        let n = now
        _ = connections.update(handle: handle) { $0.extra.lastHeard = n }
        let over = openInboundLinks() > Self.inboundQuota
        guard over || silentCentrals.refuses(peer, now: now) else { return true }
        _ = connections.update(handle: handle) { $0.extra.closing = true }
        counters.refusedInboundLinks &+= 1
        control.disconnect(handle: handle, reason: HCIStatus(rawValue: 0x14))
        return false
    }

    /// A PDU the peer sent of its own on `link` (not an answer to ours, `answersUs`): the link is not idle.
    mutating func heard(_ link: ConnectionSummary) {
        guard App.inboundLinks.idleBound != nil else { return }
        let n = now
        _ = connections.update(link) { link in
            link.extra.lastHeard = n
            link.extra.spoke = true
        }
    }

    /// Disconnects inbound links silent for the policy's bound (0x13); a central that never sent
    /// anything is refused for a while after.
    mutating func dropIdleLinks(now: UInt64) {
        guard let bound = App.inboundLinks.idleBound else { return }
        for position in 0..<links where connections.isOccupied(position) {
            guard connections.entries[position].role == .peripheral, !connections.entries[position].extra.closing,
                  now >= connections.entries[position].extra.lastHeard &+ bound else { continue }
            connections.entries[position].extra.closing = true
            counters.idleLinksDropped &+= 1
            if !connections.entries[position].extra.spoke, App.inboundLinks.refuseSilentFor > 0 {
                silentCentrals.refuse(connections.entries[position].peer, until: now &+ App.inboundLinks.refuseSilentFor)
            }
            control.disconnect(handle: connections.entries[position].handle)
        }
        updateInboundRoom()
    }
}
