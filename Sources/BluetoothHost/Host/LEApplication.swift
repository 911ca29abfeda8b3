/// What runs on top of the stack: a GATT server's delegate plus the GAP and link events.
///
/// Every method has a default that ignores the call. Each receives the `StackControl` (`Control`, of
/// the application's `ControlBuffers`) through which it may act (connect, advertise, send ATT
/// PDUs); nothing is sent until the callback returns.
public protocol LEApplication: GATTServerDelegate {
    /// The controller is up; `info` says what it is and which address we use.
    mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout Control)
    /// The controller failed; every link is gone. The runtime restarts bring-up.
    mutating func stackControllerDidFail(_ failure: ControllerFailure, now: UInt64, control: inout Control)
    mutating func stackDidReceive(advertisingReport: borrowing AdvertisingReport, now: UInt64, control: inout Control)
    /// A link came up, in either role.
    mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout Control)
    /// Our LE Create Connection to `peer` failed or timed out (status 0x08 Connection Timeout then).
    mutating func stackDidFailToConnect(to peer: DeviceAddress, status: HCIStatus, now: UInt64, control: inout Control)
    mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout Control)
    /// The link layer's PDU sizes on `handle` changed (Data Length Update, Core 5.4 Vol 6 Part B 5.1.9).
    mutating func stackDidChangeDataLength(handle: UInt16, _ length: LinkDataLength, now: UInt64, control: inout Control)
    /// A PHY Update on `handle` ended with success (Core 5.4 Vol 6 Part B 5.1.10): the PHYs now in use.
    mutating func stackDidUpdatePHY(handle: UInt16, _ phy: LinkPHY, now: UInt64, control: inout Control)
    /// An ATT PDU for the client role (responses, notifications, indications) on `handle`.
    mutating func stackDidReceiveATT(handle: UInt16, pdu: Span<UInt8>, now: UInt64, control: inout Control)
    /// The ATT_MTU of `handle`'s one bearer (Core 5.4 Vol 3 Part F 3.4.2.2), which our server uses and
    /// the application's GATT client must use too (`GATTClient.useLinkMTU`): told when the peer's
    /// client changes it, and when our client's own exchange ends (answered or refused), after its
    /// response has been delivered.
    mutating func stackDidUpdateATTMTU(handle: UInt16, mtu: UInt16, now: UInt64, control: inout Control)
    /// The peer confirmed our indication of `attribute`.
    mutating func stackIndicationConfirmed(handle: UInt16, attribute: UInt16, now: UInt64, control: inout Control)
    /// A command the application sent completed (tags `.application` and its own).
    mutating func stackCommandDidComplete(tag: CommandTag, opcode: HCIOpcode, status: HCIStatus,
                                          returnParameters: Span<UInt8>, control: inout Control)
    /// A command the application sent was never answered (e.g. Bumble's virtual controller ignores
    /// LE Encrypt); the command queue has moved on.
    mutating func stackCommandDidTimeOut(tag: CommandTag, opcode: HCIOpcode, control: inout Control)
    /// Events the stack does not consume.
    mutating func stackDidReceive(event: borrowing HCIEventPacket, control: inout Control)
    /// The application's own next timer, if any; `stackTimerFired` runs when it passes.
    var applicationDeadline: UInt64? { get }
    /// `applicationDeadline` as the stack's timer check asks it, on the application where it lies.
    /// A getter of a large application is handed a copy of it: a firmware sensor (7 KB, its device
    /// database and links) was copied onto the main loop's stack on every tick. An application that
    /// large implements this as the same computation, mutating only so that it reads in place.
    mutating func applicationDeadlineInPlace() -> UInt64?
    mutating func stackTimerFired(now: UInt64, control: inout Control)
    /// Whether the application ever scans (observer or central, Core 5.4 Vol 6 Part B 4.4.3; true
    /// unless said otherwise). One that only advertises says false: advertising reports are then
    /// dropped unread, and parsing them is left out of its image.
    static var scans: Bool { get }
    /// Whether the application ever connects as central (`StackControl.connect`; true unless said
    /// otherwise). A peripheral only says false: the stack's bookkeeping of connection attempts and
    /// its central side of the connection parameter update procedure (Core 5.4 Vol 3 Part A 4.20)
    /// are left out of its image, and a `connect` from it stops the stack with a message.
    static var connectsAsCentral: Bool { get }
    /// How links that centrals open to us are admitted and how long a silent one is kept
    /// (`InboundLinkPolicy.open` unless said otherwise).
    static var inboundLinks: InboundLinkPolicy { get }
    /// Whether the stack asks each link for the LE 2M PHY (LE Set PHY, `LEStack+PHY`; true unless
    /// said otherwise) when the controller prefers it. An application whose links carry a few
    /// hundred octets says false: the PHY Update takes six connection events or more to its instant,
    /// with the central's data held meanwhile on Zephyr's controller, to save well under a
    /// millisecond of air; and on Zephyr's simulated controller the switch lost links (see
    /// `LEStack+PHY`). Bring-up still sets 2M as the controller's preference, so a peer that asks
    /// gets it, and its updates are reported.
    static var asksForLE2MPHY: Bool { get }
    /// Whether the stack follows LE PHY Update Complete (Core 5.4 Vol 4 Part E 7.7.65.12): each
    /// link's PHYs, the `phyUpdates` counters and `stackDidUpdatePHY` (true unless said otherwise).
    /// An application that neither asks for the LE 2M PHY nor cares which PHY a link uses says
    /// false: the events are dropped unread and their handling is left out of its image. One that
    /// asks for 2M follows them whatever it says (a collision is retried from them).
    static var tracksPHYUpdates: Bool { get }
    /// Whether input the HCI host drops (events that do not parse, advertising reports cut short) is
    /// counted with its reasons in `HCIHost.drops`, which the runtime prints with `--stats` (by
    /// default, when `InputDrops` keeps them). False: nothing is counted, and building the records is
    /// left out of the image.
    static var recordsInputDrops: Bool { get }
    /// Where the HCI host keeps the input it drops: `HCIInputDrops` (counts and the last few, 124
    /// octets on 32 bits) unless said otherwise; firmware that never reads them says `NoInputDrops`.
    associatedtype InputDrops: HCIInputDropRecording = HCIInputDrops
    /// What the stack counts (`LEStack.counters`): `LEStackCounters` unless said otherwise; an image
    /// that never reads them says `NoLEStackCounters`, and its stack keeps none.
    associatedtype StackCounters: LEStackCounting = LEStackCounters
    /// Whether the stack follows LE Data Length Change (Core 5.4 Vol 4 Part E 7.7.65.7): each link's
    /// `dataLength`, the `dataLengthChanges` counters and `stackDidChangeDataLength` (true unless said
    /// otherwise). One that reads none of them says false: the events are dropped unread (the stack
    /// still asks for the larger PDUs; fragmentation follows the controller's buffers, not these).
    static var tracksDataLengthChanges: Bool { get }
    /// Whether the stack follows LE Connection Update Complete (Core 5.4 Vol 4 Part E 7.7.65.3): each
    /// link's `timing` after an update (true unless said otherwise). One that never reads a link's
    /// timing after it came up says false: the events are dropped unread, and `LEStack.timing` keeps
    /// what LE Connection Complete gave. The link layer's procedure is the controllers' either way
    /// (Vol 6 Part B 5.1.1): nothing on air changes.
    static var tracksConnectionTiming: Bool { get }
    /// Whether it ever asks the central for connection parameters (`LEStack.requestConnectionParameters`,
    /// Core 5.4 Vol 3 Part A 4.20; true unless said otherwise). One that never does says false: the
    /// matching of responses and rejects to its requests is left out, and a request stops the stack
    /// with a message.
    static var requestsConnectionParameters: Bool { get }
    /// Whether it runs a GATT client (true unless said otherwise): ATT responses, notifications and
    /// indications reach `stackDidReceiveATT`, and our client's Exchange MTU sets the link's ATT_MTU.
    /// A server only says false: such PDUs, which its peers have no reason to send, are dropped.
    static var hasGATTClient: Bool { get }
    /// Whether the host may probe the controller's liveness (`HostConfiguration.livenessInterval`;
    /// true unless said otherwise). Firmware whose controller shares its board, and which never sets
    /// an interval, says false: the probe's timer and its Read BD_ADDR are left out of its image, and
    /// a configuration that sets an interval stops `BluetoothStack.start` with a message.
    static var probesControllerLiveness: Bool { get }
    /// What each link buffers, sized by the largest ATT_MTU this application serves (Core 5.4 Vol 3
    /// Part F 3.2.8): its inbound L2CAP reassembly and the ATT response held for a full queue, one
    /// PDU each, and the stack's working copies while it answers. `LinkPDUBuffers<247>` (the
    /// largest ATT PDU a 251-octet LE data length carries in one packet) unless said otherwise; the
    /// stack never agrees to a larger ATT_MTU than this (Exchange MTU answers with it at most).
    associatedtype LinkBuffers: LinkBufferSizing = LinkPDUBuffers<247>
    /// The command and outbound ACL queues of the `StackControlOf` its callbacks receive, sized by
    /// what it sends: `StandardControlBuffers` (384 and 1,024 octets, the Herald sensor's) unless
    /// said otherwise. The ACL queue must hold at least one whole PDU of `LinkBuffers` per link.
    associatedtype ControlBuffers: StackControlBuffers = StandardControlBuffers
    /// Whether the constant GATT table it serves may have gaps in its handles (`GATTHandleLayout`):
    /// `AnyGATTHandles` unless said otherwise. An application whose table is the builder's (dense)
    /// says `ConsecutiveGATTHandles`, and a sparse table's lookups are left out of its image.
    associatedtype GATTHandles: GATTHandleLayout = AnyGATTHandles
    /// Where the stack keeps the centrals its `inboundLinks` policy refuses for a while
    /// (`refuseSilentFor`): `SilentCentrals` (eight, 120 octets) unless said otherwise. An
    /// application whose policy refuses no one (`.open`) says `NoSilentCentrals`, and the stack
    /// value holds no list; a policy that refuses with no room to remember stops the stack at start.
    associatedtype RefusedCentrals: SilentCentralMemory = SilentCentrals
    /// What every callback receives: `StackControl` unless `ControlBuffers` says otherwise.
    typealias Control = StackControlOf<ControlBuffers>
}

/// The buffer types of a link (`LEApplication.LinkBuffers`).
public protocol LinkBufferSizing {
    /// Each link's inbound L2CAP reassembly.
    associatedtype Reassembler: L2CAPReassembling
    /// One whole ATT PDU: a response being built, and the one held for a full queue.
    associatedtype PDU: ATTPDUBuffer
}

/// Link buffers for ATT PDUs of up to `mtu` octets (at least 23, the LE minimum ATT_MTU, which also
/// covers the LE signalling channel's 23-octet minimum MTU, Core 5.4 Vol 3 Part A 4).
public enum LinkPDUBuffers<let mtu: Int>: LinkBufferSizing {
    public typealias Reassembler = ACLReassembler<mtu>
    public typealias PDU = FixedBytes<mtu>
}

/// A fixed-capacity buffer for one ATT PDU (`FixedBytes<n>`), as the stack uses it generically.
public protocol ATTPDUBuffer: ATTResponseSink {
    /// A copy of `bytes` (what fits).
    init(_ bytes: Span<UInt8>)
    static var capacity: Int { get }
    var isEmpty: Bool { get }
    mutating func removeAll()
}

extension FixedBytes: ATTPDUBuffer {
    public mutating func withSpan<R>(_ body: (Span<UInt8>) -> R) -> R { body(span) }
}

extension LEApplication {
    public mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout Control) {}
    public mutating func stackControllerDidFail(_ failure: ControllerFailure, now: UInt64, control: inout Control) {}
    public mutating func stackDidReceive(advertisingReport: borrowing AdvertisingReport, now: UInt64, control: inout Control) {}
    public mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout Control) {}
    public mutating func stackDidFailToConnect(to peer: DeviceAddress, status: HCIStatus, now: UInt64, control: inout Control) {}
    public mutating func stackDidUpdateATTMTU(handle: UInt16, mtu: UInt16, now: UInt64, control: inout Control) {}
    public mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout Control) {}
    public mutating func stackDidChangeDataLength(handle: UInt16, _ length: LinkDataLength, now: UInt64, control: inout Control) {}
    public mutating func stackDidUpdatePHY(handle: UInt16, _ phy: LinkPHY, now: UInt64, control: inout Control) {}
    public mutating func stackDidReceiveATT(handle: UInt16, pdu: Span<UInt8>, now: UInt64, control: inout Control) {}
    public mutating func stackIndicationConfirmed(handle: UInt16, attribute: UInt16, now: UInt64, control: inout Control) {}
    public mutating func stackCommandDidComplete(tag: CommandTag, opcode: HCIOpcode, status: HCIStatus,
                                                 returnParameters: Span<UInt8>, control: inout Control) {}
    public mutating func stackCommandDidTimeOut(tag: CommandTag, opcode: HCIOpcode, control: inout Control) {}
    public mutating func stackDidReceive(event: borrowing HCIEventPacket, control: inout Control) {}
    public var applicationDeadline: UInt64? { nil }
    public mutating func applicationDeadlineInPlace() -> UInt64? { applicationDeadline }
    public mutating func stackTimerFired(now: UInt64, control: inout Control) {}
    public static var scans: Bool { true }
    public static var connectsAsCentral: Bool { true }
    public static var inboundLinks: InboundLinkPolicy { .open }
    public static var asksForLE2MPHY: Bool { true }
    public static var tracksPHYUpdates: Bool { true }
    public static var recordsInputDrops: Bool { InputDrops.keepsRecords }
    public static var tracksDataLengthChanges: Bool { true }
    public static var tracksConnectionTiming: Bool { true }
    public static var requestsConnectionParameters: Bool { true }
    public static var hasGATTClient: Bool { true }
    public static var probesControllerLiveness: Bool { true }
}

/// Per-link state above L2CAP: the ATT bearer (MTU, prepare queue, indication in flight).
public struct LinkState<PrepareQueue: ATTPrepareQueue, PDU: ATTPDUBuffer>: ConnectionExtra {
    public var bearer = ATTBearer<PrepareQueue>()
    /// An ATT response the outbound queue had no room for, sent as soon as there is (see
    /// `LEStack.sendHeldResponses`). One is enough: the client sends no new request before it has
    /// the response to the last (Core 5.4 Vol 3 Part F 3.3.2).
    public internal(set) var heldResponse = PDU()
    /// When the peer last sent an L2CAP PDU (or the link came up), for `InboundLinkPolicy.idleBound`.
    public internal(set) var lastHeard: UInt64 = 0
    /// Whether the peer has sent any L2CAP PDU on this link.
    public internal(set) var spoke = false
    /// We asked the controller to disconnect this link (idle, or refused); it no longer counts.
    public internal(set) var closing = false
    public init() {}
}

/// Where `LEStack` counts (`LEApplication.StackCounters`): `LEStackCounters` keeps every count, which
/// the runtime prints with `--stats`; `NoLEStackCounters` keeps none, for an image that never reads
/// them. The stack only ever writes them, so keeping none changes nothing it does.
public protocol LEStackCounting {
    init()
    var malformedACL: Int { get set }
    var rejectedConnections: Int { get set }
    var reusedHandles: Int { get set }
    var refusedInboundLinks: Int { get set }
    var idleLinksDropped: Int { get set }
    var attResponses: Int { get set }
    var heldResponses: Int { get set }
    var dataLengthChanges: Int { get set }
    var refusedParameterRequests: Int { get set }
    var lastTxOctets: UInt16 { get set }
    var lastRxOctets: UInt16 { get set }
    var phyUpdates: Int { get set }
    var lastTxPHY: LEPHY { get set }
    var lastRxPHY: LEPHY { get set }
    var failedPHYUpdates: Int { get set }
}

/// Counts nothing: every count reads 0 (`LEStackCounting`).
public struct NoLEStackCounters: LEStackCounting, Sendable {
    public init() {}
    public var malformedACL: Int { get { 0 } set {} }
    public var rejectedConnections: Int { get { 0 } set {} }
    public var reusedHandles: Int { get { 0 } set {} }
    public var refusedInboundLinks: Int { get { 0 } set {} }
    public var idleLinksDropped: Int { get { 0 } set {} }
    public var attResponses: Int { get { 0 } set {} }
    public var heldResponses: Int { get { 0 } set {} }
    public var dataLengthChanges: Int { get { 0 } set {} }
    public var refusedParameterRequests: Int { get { 0 } set {} }
    public var lastTxOctets: UInt16 { get { 0 } set {} }
    public var lastRxOctets: UInt16 { get { 0 } set {} }
    public var phyUpdates: Int { get { 0 } set {} }
    public var lastTxPHY: LEPHY { get { .le1M } set {} }
    public var lastRxPHY: LEPHY { get { .le1M } set {} }
    public var failedPHYUpdates: Int { get { 0 } set {} }
}

/// Counters for robustness checks: nothing here should grow on a healthy link.
///
/// Every statistics counter in the core wraps (`&+= 1`): `Int` is 32 bits on the Cortex-M, and a
/// checked increment would stop a device after 2^31 events (25 days of 1,000 packets a second).
public struct LEStackCounters: LEStackCounting, Equatable, Sendable {
    public var malformedACL = 0
    public var rejectedConnections = 0
    /// Links reported on a handle we still held: the controller had ended the old link unreported.
    public var reusedHandles = 0
    /// Inbound links disconnected at once: over `InboundLinkPolicy`'s quota, or a refused silent central.
    public var refusedInboundLinks = 0
    /// Inbound links disconnected after `InboundLinkPolicy.idleBound` of silence.
    public var idleLinksDropped = 0
    public var attResponses = 0
    /// ATT responses that waited for room in the outbound queue.
    public var heldResponses = 0
    /// LE Data Length Change events applied to a link, and the sizes the latest one reported.
    public var dataLengthChanges = 0
    /// Our Connection Parameter Update Requests the central refused.
    public var refusedParameterRequests = 0
    public var lastTxOctets: UInt16 = 0
    public var lastRxOctets: UInt16 = 0
    /// LE PHY Update Complete events with success, the PHYs the last one reported, and the
    /// procedures that ended with an error (the peer or its controller refused, or a collision).
    public var phyUpdates = 0
    public var lastTxPHY = LEPHY.le1M
    public var lastRxPHY = LEPHY.le1M
    public var failedPHYUpdates = 0
    public init() {}
}
