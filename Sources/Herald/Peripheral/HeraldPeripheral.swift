import BluetoothHost

/// Per-link state of the Herald service: the payload snapshot served to that central and its
/// signal-write reassembly.
struct HeraldLinkState<let payloadCapacity: Int, let signalCapacity: Int> {
    static var free: UInt16 { 0xFFFF }

    var handle: UInt16 = Self.free
    var peer = DeviceAddress(type: .publicDevice, address: .zero)
    var role: ConnectionRole = .peripheral
    var payload = FixedBytes<payloadCapacity>()
    var hasPayload = false
    var signal = SignalReassembler<signalCapacity>()
    /// The advertiser's period when the link came up: the period of the address the central used.
    /// Last, so the state's size is a multiple of its 8-octet alignment: an `InlineArray` element
    /// whose size is not its stride is addressed as if 1-aligned (Swift 6.3), each field an octet
    /// at a time on a Cortex-M0 (`Connection.phyRequestAt` says more).
    var period: Int64 = 0

    init() {}

    /// Back to a free slot, field by field where it lies: assigning `HeraldLinkState()` built the
    /// whole state (payload and signal buffers) in a temporary first, and `InlineArray(repeating:)`
    /// all the links' (1.1 KB of the firmware wearable's stack).
    mutating func clear() {
        handle = Self.free
        peer = DeviceAddress(type: .publicDevice, address: .zero)
        role = .peripheral
        period = 0
        payload.removeAll()
        hasPayload = false
        signal.reset()
    }
}

/// The peripheral half of a Herald device, as a component: an application (`LEApplication`) embeds
/// it, forwards the stack's callbacks to it and receives its events through a
/// `HeraldPeripheralDelegate`. `HeraldPeripheralApplication` is that application when nothing else
/// runs; a full sensor embeds this next to its central role.
///
/// - Payload characteristic: the payload is produced on a link's first read, by the delegate if it
///   supplies one (a sensor's core, from its `PayloadDataSupplier`), else from `source`, and kept
///   for the rest of that connection, so Read Blob pieces always come from one value (Core 5.4 Vol 3
///   Part F 3.4.4.5 leaves consistency to the server). It is the payload of the period the link was
///   made in, i.e. of the address the central connected to: a central connected across a boundary is
///   never handed the next period's identifier on a link to the previous period's address, which
///   would tie the two together.
/// - Signal characteristic: writes are fragments of one message at a time per link, appended until
///   the length the message declares (`SignalReassembler`); whole messages become delegate events.
/// - Advertising: `HeraldAdvertiser` (rotating resolvable private address).
///
/// Links are named by their HCI connection handle, as the stack names them in every callback
/// (connections and GATT accesses alike). Each link's state sits in whichever entry of
/// `linkStates` was free when it connected, found again by handle (a scan of `links` entries);
/// nothing here depends on where the stack keeps the link. Forward every
/// `stackDidConnect`/`stackDidDisconnect` (both roles): a table of `links` entries then always has
/// room for every link the stack can hold.
///
/// Sizes: `payloadCapacity` bounds the payload (21 for a plain Simple payload, 510 at most),
/// `signalCapacity` the largest signal message accepted. `Offer` is what its GATT server offers
/// (`HeraldServerOffer`): the optional procedures and each link's prepare queue, the peripheral's
/// choice with its database, whatever its delegate.
public struct HeraldPeripheral<Source: HeraldPayloadSource, Offer: HeraldServerOffer, let links: Int, let payloadCapacity: Int,
                               let signalCapacity: Int> {
    public var source: Source
    public var advertiser: HeraldAdvertiser
    /// Handles of the service, once `install(into:)` ran.
    public internal(set) var handles: HeraldGATTHandles?
    public internal(set) var payloadID: UInt16
    public internal(set) var signalID: UInt16
    var linkStates: InlineArray<links, HeraldLinkState<payloadCapacity, signalCapacity>>

    public init(source: Source, advertising: HeraldAdvertisingConfiguration, clock: HeraldClock,
                payloadID: UInt16 = HeraldGATTProfile.payloadValueID,
                signalID: UInt16 = HeraldGATTProfile.signalValueID) throws(AdvertisingDataError) {
        self.source = source
        advertiser = try HeraldAdvertiser(configuration: advertising, clock: clock)
        self.payloadID = payloadID
        self.signalID = signalID
        linkStates = Self.freeLinks()
    }

    /// With an advertiser made beforehand (e.g. from an advertisement kept in flash): cannot fail.
    public init(source: Source, advertiser: HeraldAdvertiser, payloadID: UInt16 = HeraldGATTProfile.payloadValueID,
                signalID: UInt16 = HeraldGATTProfile.signalValueID) {
        self.source = source
        self.advertiser = advertiser
        self.payloadID = payloadID
        self.signalID = signalID
        linkStates = Self.freeLinks()
    }

    /// Adds the Herald service to the database the stack will serve (before the stack is built).
    public mutating func install<let A: Int, let V: Int>(into database: inout GATTDatabase<A, V, links>) throws(GATTDatabaseError) {
        handles = try HeraldGATTProfile.add(to: &database, identifiers: advertiser.configuration.identifiers,
                                            payloadID: payloadID, signalID: signalID)
    }

    /// True when `id` is one of this peripheral's dynamic values (forward its reads and writes here).
    public func owns(id: UInt16) -> Bool { id == payloadID || id == signalID }

    /// Link `handle`, as it connected; nil when no such link is up.
    public func link(handle: UInt16) -> HeraldLink? {
        guard handle != HeraldLinkState<payloadCapacity, signalCapacity>.free else { return nil }
        for i in 0..<links where linkStates[i].handle == handle {
            return HeraldLink(handle: handle, role: linkStates[i].role, peer: linkStates[i].peer)
        }
        return nil
    }

    /// Bytes of a signal message waiting for more fragments on link `handle`.
    public func pendingSignalBytes(link handle: UInt16) -> Int {
        guard handle != HeraldLinkState<payloadCapacity, signalCapacity>.free else { return 0 }
        for i in 0..<links where linkStates[i].handle == handle { return linkStates[i].signal.pendingCount }
        return 0
    }

    /// The entry holding link `handle`. Mutating, like `reportedLink`, so that the table is read
    /// where it lies on the peripheral's own paths.
    @inline(__always)
    mutating func entry(of handle: UInt16) -> Int? {
        guard handle != HeraldLinkState<payloadCapacity, signalCapacity>.free else { return nil }
        for i in 0..<links where linkStates[i].handle == handle { return i }
        return nil
    }

    /// An entry no link holds.
    @inline(__always)
    mutating func freeEntry() -> Int? {
        for i in 0..<links where linkStates[i].handle == HeraldLinkState<payloadCapacity, signalCapacity>.free { return i }
        return nil
    }

    /// The link in entry `i`, for the peripheral's own mutating paths (reads, writes, connection
    /// events): there a call to the read-only `link(handle:)` made the compiler copy every link's
    /// state into the frame first (0.6 KB for two, on the beacon's deepest main-loop path; Swift 6.3
    /// -Osize, `Tools/firmware frames`).
    mutating func reportedLink(_ i: Int) -> HeraldLink {
        HeraldLink(handle: linkStates[i].handle, role: linkStates[i].role, peer: linkStates[i].peer)
    }

    // MARK: GATT server (forward GATTServerDelegate.read/write for owned ids)

    public mutating func read<S: ByteSink, D: HeraldPeripheralDelegate>(
        id: UInt16, link handle: UInt16, offset: Int, into sink: inout S, delegate: inout D
    ) -> ATTErrorCode? {
        guard id == payloadID else { return .readNotPermitted }
        guard let i = entry(of: handle) else { return .unlikelyError }
        // A payload fixed in flash needs no snapshot: every piece of a Read Blob comes from the same
        // octets (Core 5.4 Vol 3 Part F 3.4.4.5), whichever period the link was made in.
        if let constant = Source.constantBytes {
            let bytes = constant.span
            guard offset <= bytes.count else { return .invalidOffset }
            if offset == 0 { delegate.heraldPeripheral(didServePayload: bytes, to: reportedLink(i)) }
            sink.append(contentsOf: bytes.extracting(offset..<bytes.count))
            return nil
        }
        if !linkStates[i].hasPayload {
            let time = advertiser.unixSeconds(startOf: linkStates[i].period)
            // Written into the link's buffer where it lies (a local and a copy for the delegate were
            // two more payloads on the stack). No payload (outside the key schedule) or one too large
            // for the buffer: serve nothing rather than a truncated or all-zero identifier.
            linkStates[i].payload.removeAll()
            let written: Bool
            if let supplied = delegate.heraldPeripheral(payloadAt: time, into: &linkStates[i].payload) {
                written = supplied
            } else {
                written = source.writePayload(at: time, to: &linkStates[i].payload)
            }
            guard written, !linkStates[i].payload.overflowed else {
                linkStates[i].payload.removeAll()
                return .unlikelyError
            }
            linkStates[i].hasPayload = true
        }
        let count = linkStates[i].payload.count
        guard offset <= count else { return .invalidOffset }
        if offset == 0 {
            let link = reportedLink(i)
            delegate.heraldPeripheral(didServePayload: linkStates[i].payload.span, to: link)
        }
        // As a span of the link's buffer, in one append: octet by octet through the buffer's
        // subscript, the compiler copied the whole buffer into the frame twice first (136 B on the
        // beacon's deepest main-loop path, `Tools/firmware frames`).
        sink.append(contentsOf: linkStates[i].payload.span.extracting(offset..<count))
        return nil
    }

    /// A write to the signal characteristic. Every write is the next fragment of the link's current
    /// message, whatever its ATT offset: the compliant writer sends consecutive Write Requests at
    /// offset 0, and a long write's prepared parts arrive in offset order.
    public mutating func write<D: HeraldPeripheralDelegate>(
        id: UInt16, link handle: UInt16, offset: Int, value: Span<UInt8>, delegate: inout D
    ) -> ATTErrorCode? {
        guard id == signalID else { return .writeNotPermitted }
        guard let i = entry(of: handle) else { return .unlikelyError }
        // Accepted and dropped unread: the writer sees success, so a phone's Herald exchange
        // carries on as with any peripheral.
        if !D.receivesSignals { return nil }
        let link = reportedLink(i)
        switch linkStates[i].signal.receive(value) {
        case .keepAwake:
            delegate.heraldPeripheral(didKeepAwake: link)
            return nil
        case .incomplete:
            return nil
        case .rejected(let code):
            delegate.heraldPeripheral(didRejectSignalWrite: value, from: link)
            return ATTErrorCode(rawValue: code)
        case .complete:
            let message = linkStates[i].signal.buffer
            if deliver(message.span, link: link, delegate: &delegate) { return nil }
            linkStates[i].signal.reset()
            delegate.heraldPeripheral(didRejectSignalWrite: value, from: link)
            return .invalidAttributeValueLength
        }
    }

    /// Turns a whole message into its event; false when its content can never be valid.
    func deliver<D: HeraldPeripheralDelegate>(_ bytes: Span<UInt8>, link: HeraldLink, delegate: inout D) -> Bool {
        guard let message = try? SignalMessage(parsing: bytes) else { return false }
        switch message.kind {
        case .keepAwake:
            delegate.heraldPeripheral(didKeepAwake: link)
        case .payload:
            delegate.heraldPeripheral(didReceivePayload: message.data, from: link)
        case .rssi:
            delegate.heraldPeripheral(didMeasureRSSI: message.rssi, from: link)
        case .payloadSharing:
            // Shared payloads carry no lengths: a list that is not whole payloads cannot be split.
            let payloads = SharedPayloadIterator(message.data)
            guard (try? payloads.validate()) != nil else { return false }
            delegate.heraldPeripheral(didShare: payloads, rssi: message.rssi, from: link)
        case .immediateSend:
            delegate.heraldPeripheral(didReceiveImmediateSend: message.data, from: link)
        }
        return true
    }

    // MARK: Stack events (forward from the LEApplication)

    public mutating func stackDidBecomeReady<D: HeraldPeripheralDelegate, B: StackControlBuffers>(
        _ info: ControllerInfo, now: UInt64, control: inout StackControlOf<B>, delegate: inout D
    ) {
        clearLinks()
        delegate.heraldPeripheral(didBecomeReady: info.address, now: now)
        advertiser.stackDidBecomeReady(info, now: now, tracksPeriods: Self.tracksPeriods(D.self), control: &control,
                                       delegate: &delegate)
    }

    /// Whether the peripheral follows the payload period grid: for a payload that changes with the
    /// period, or for an address that rotates with it. A fixed payload under a fixed address needs
    /// neither (a venue beacon).
    public static func tracksPeriods<D: HeraldPeripheralDelegate>(_ delegate: D.Type) -> Bool {
        Source.changesWithTime || D.rotatesAddress
    }

    public mutating func stackControllerDidFail() {
        clearLinks()
        advertiser.stackControllerDidFail()
    }

    /// Every entry free, built in a frame of its own (inlined into the caller, the table's
    /// temporary added to the frame that builds the firmware's stack value).
    @inline(never)
    static func freeLinks() -> InlineArray<links, HeraldLinkState<payloadCapacity, signalCapacity>> {
        InlineArray(repeating: HeraldLinkState())
    }

    mutating func clearLinks() {
        for i in 0..<links { linkStates[i].clear() }
    }

    /// Forward for every link, central or peripheral: the link takes any free entry (with `links`
    /// entries there is one for each link the stack can hold).
    public mutating func stackDidConnect<D: HeraldPeripheralDelegate, B: StackControlBuffers>(
        _ link: ConnectionSummary, now: UInt64, control: inout StackControlOf<B>, delegate: inout D
    ) {
        if entry(of: link.handle) == nil, let i = freeEntry() {
            linkStates[i].clear()
            linkStates[i].handle = link.handle
            linkStates[i].peer = link.peer
            linkStates[i].role = link.role
            linkStates[i].period = advertiser.period
            delegate.heraldPeripheral(didConnect: reportedLink(i))
        }
        advertiser.stackDidConnect(link, now: now, control: &control)
    }

    public mutating func stackDidDisconnect<D: HeraldPeripheralDelegate, B: StackControlBuffers>(
        handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControlOf<B>, delegate: inout D
    ) {
        if let i = entry(of: handle) {
            let gone = reportedLink(i)
            linkStates[i].clear()
            delegate.heraldPeripheral(didDisconnect: gone, reason: reason)
        }
        advertiser.stackDidDisconnect(now: now, control: &control)
    }

    /// Reports a link's new PHYs; nothing to change here (the stack applied them).
    public mutating func stackDidUpdatePHY<D: HeraldPeripheralDelegate>(handle: UInt16, _ phy: LinkPHY, delegate: inout D) {
        if let i = entry(of: handle) {
            delegate.heraldPeripheral(didUpdatePHY: phy, on: reportedLink(i))
        }
    }

    public var deadline: UInt64? { advertiser.deadline }
    public mutating func deadlineInPlace() -> UInt64? { advertiser.deadlineInPlace() }

    public mutating func stackTimerFired<D: HeraldPeripheralDelegate, B: StackControlBuffers>(
        now: UInt64, control: inout StackControlOf<B>, delegate: inout D
    ) {
        advertiser.stackTimerFired(now: now, control: &control, delegate: &delegate)
    }

    /// Consumes completions tagged `HeraldCommandTag`; false for other commands.
    public mutating func stackCommandDidComplete<D: HeraldPeripheralDelegate, B: StackControlBuffers>(
        tag: CommandTag, opcode: HCIOpcode, status: HCIStatus, returnParameters: Span<UInt8>,
        control: inout StackControlOf<B>, delegate: inout D
    ) -> Bool {
        advertiser.stackCommandDidComplete(tag: tag, opcode: opcode, status: status, returnParameters: returnParameters,
                                           control: &control, delegate: &delegate)
    }
}
