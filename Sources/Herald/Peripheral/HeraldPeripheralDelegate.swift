import BluetoothHost

/// One link as the peripheral reports it: the HCI connection handle (the link's only name at every
/// interface), our role on it and the peer's address as the controller reported it.
public struct HeraldLink: Sendable, Equatable {
    public var handle: UInt16
    public var role: ConnectionRole
    public var peer: DeviceAddress

    public init(handle: UInt16, role: ConnectionRole, peer: DeviceAddress) {
        self.handle = handle
        self.role = role
        self.peer = peer
    }
}

/// What the Herald peripheral tells its application. Every method has a default that ignores it.
/// Spans are valid only during the call. What the GATT server offers is not the delegate's to say
/// (`HeraldServerOffer`, the peripheral's type parameter).
public protocol HeraldPeripheralDelegate {
    /// The controller is up (again): `address` is the one it uses until the advertiser sets a
    /// private one, `now` the stack's time (firmware logs it as its `ready` line).
    mutating func heraldPeripheral(didBecomeReady address: BDAddress, now: UInt64)
    /// A link came up (either role: the peripheral hears every link).
    mutating func heraldPeripheral(didConnect link: HeraldLink)
    /// A link went down; its payload snapshot and partial signal message are gone.
    mutating func heraldPeripheral(didDisconnect link: HeraldLink, reason: HCIStatus)
    /// The link's PHYs changed (LE PHY Update Complete, Core 5.4 Vol 4 Part E 7.7.65.12).
    mutating func heraldPeripheral(didUpdatePHY phy: LinkPHY, on link: HeraldLink)
    /// A central read our payload characteristic from offset 0; `payload` is what it gets (and what
    /// later Read Blob requests on this link continue).
    mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink)
    /// Signal message 0x01: the writer's own payload (what reading its payload would have given).
    mutating func heraldPeripheral(didReceivePayload payload: Span<UInt8>, from link: HeraldLink)
    /// Signal message 0x02: the RSSI (dBm) at which the writer hears us.
    mutating func heraldPeripheral(didMeasureRSSI rssi: Int16, from link: HeraldLink)
    /// Signal message 0x03: payloads the writer has seen, split into single payloads, and its RSSI of us.
    mutating func heraldPeripheral(didShare payloads: SharedPayloadIterator, rssi: Int16, from link: HeraldLink)
    /// Signal message 0x04: application data sent immediately.
    mutating func heraldPeripheral(didReceiveImmediateSend data: Span<UInt8>, from link: HeraldLink)
    /// An empty write: an iOS central keeping itself awake.
    mutating func heraldPeripheral(didKeepAwake link: HeraldLink)
    /// A write that can never form a valid message; it was answered with Invalid Attribute Value
    /// Length and the link's partial message was dropped.
    mutating func heraldPeripheral(didRejectSignalWrite fragment: Span<UInt8>, from link: HeraldLink)
    /// Our advertising address changed (a new resolvable private address at a period boundary).
    mutating func heraldPeripheral(didChangeAddress address: BDAddress, unixMillis: Int64)
    /// A command of the peripheral's failed (e.g. LE Encrypt unsupported, advertising refused).
    mutating func heraldPeripheral(commandFailed opcode: HCIOpcode, status: HCIStatus)
    /// Our payload for `time` (UTC seconds, the start of the link's payload period), when the
    /// application supplies it rather than the peripheral's own `source`: a sensor's core answers from
    /// its `PayloadDataSupplier`, so both halves have one provider. nil (the default): the source
    /// serves. True or false as `HeraldPayloadSource.writePayload(at:to:)`.
    mutating func heraldPeripheral<S: ByteSink>(payloadAt time: Int64, into sink: inout S) -> Bool?
    /// Whether this build can advertise a resolvable private address rotated every payload period
    /// (true unless said otherwise). A venue beacon, which has nothing to hide, says false and
    /// advertises the controller's identity address: being a constant after specialisation, the
    /// LE Rand / LE Encrypt round trips and the software AES are then left out of its image. A
    /// configuration with an IRK is refused at start-up by `HeraldPeripheralApplication`.
    static var rotatesAddress: Bool { get }
    /// Whether a rotating address is hashed by the controller's LE Encrypt (true unless said
    /// otherwise), the software AES-128 standing in only where that fails or goes unanswered. False:
    /// always in software, the same ah(IRK, prand) (Core 5.4 Vol 3 Part H 2.2.2); the AES is linked
    /// for such controllers anyway, so the LE Encrypt round trip, its watchdog and its answer's
    /// parsing are then left out of the image.
    static var usesLEEncrypt: Bool { get }
    /// Whether signal messages centrals write are reassembled and reported (true unless said
    /// otherwise). A venue beacon says false: the visit diary is the phone's to keep (Herald beacon
    /// payload specification), so the beacon accepts each write and discards it unread, and the
    /// reassembly and message parsing are left out of its image.
    static var receivesSignals: Bool { get }
    /// Whether PHY updates are followed and reported (`heraldPeripheral(didUpdatePHY:on:)`; true
    /// unless said otherwise). A venue beacon, whose phones read one payload and go, says false: the
    /// stack then drops LE PHY Update Complete unread (`LEApplication.tracksPHYUpdates`).
    static var tracksPHYUpdates: Bool { get }
    /// Whether the HCI host counts the input it drops, with reasons (`LEApplication.recordsInputDrops`;
    /// by default, when `InputDrops` keeps them). Firmware that never reads `HCIHost.drops` says
    /// `NoInputDrops`, which makes this false.
    static var recordsInputDrops: Bool { get }
    /// Where the HCI host keeps them (`LEApplication.InputDrops`): `HCIInputDrops` unless said
    /// otherwise; a delegate that never reads them says `NoInputDrops`, and its stack holds none.
    associatedtype InputDrops: HCIInputDropRecording = HCIInputDrops
    /// What the stack counts (`LEApplication.StackCounters`): `LEStackCounters` unless said otherwise.
    associatedtype StackCounters: LEStackCounting = LEStackCounters
    /// Whether LE Data Length Change is followed (`LEApplication.tracksDataLengthChanges`, the
    /// stack's counters and each link's `dataLength`; true unless said otherwise). Firmware that
    /// reads neither says false.
    static var tracksDataLengthChanges: Bool { get }
    /// Whether the host may probe the controller's liveness (`LEApplication.probesControllerLiveness`;
    /// true unless said otherwise). Firmware that never sets `HostConfiguration.livenessInterval`
    /// says false.
    static var probesControllerLiveness: Bool { get }
}

extension HeraldPeripheralDelegate {
    public mutating func heraldPeripheral(didBecomeReady address: BDAddress, now: UInt64) {}
    public mutating func heraldPeripheral(didConnect link: HeraldLink) {}
    public mutating func heraldPeripheral(didDisconnect link: HeraldLink, reason: HCIStatus) {}
    public mutating func heraldPeripheral(didUpdatePHY phy: LinkPHY, on link: HeraldLink) {}
    public mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink) {}
    public mutating func heraldPeripheral(didReceivePayload payload: Span<UInt8>, from link: HeraldLink) {}
    public mutating func heraldPeripheral(didMeasureRSSI rssi: Int16, from link: HeraldLink) {}
    public mutating func heraldPeripheral(didShare payloads: SharedPayloadIterator, rssi: Int16, from link: HeraldLink) {}
    public mutating func heraldPeripheral(didReceiveImmediateSend data: Span<UInt8>, from link: HeraldLink) {}
    public mutating func heraldPeripheral(didKeepAwake link: HeraldLink) {}
    public mutating func heraldPeripheral(didRejectSignalWrite fragment: Span<UInt8>, from link: HeraldLink) {}
    public mutating func heraldPeripheral(didChangeAddress address: BDAddress, unixMillis: Int64) {}
    public mutating func heraldPeripheral(commandFailed opcode: HCIOpcode, status: HCIStatus) {}
    public mutating func heraldPeripheral<S: ByteSink>(payloadAt time: Int64, into sink: inout S) -> Bool? { nil }
    public static var rotatesAddress: Bool { true }
    public static var usesLEEncrypt: Bool { true }
    public static var receivesSignals: Bool { true }
    public static var tracksPHYUpdates: Bool { true }
    public static var recordsInputDrops: Bool { InputDrops.keepsRecords }
    public static var tracksDataLengthChanges: Bool { true }
    public static var probesControllerLiveness: Bool { true }
}
