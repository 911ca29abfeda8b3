import BluetoothHost

/// `HeraldPeripheral` as a whole application: a wearable or beacon that only serves the Herald service.
/// One application for every image: what its server offers is the peripheral's (`Offer`), its
/// stack's buffers among it (`HeraldServerOffer.LinkBuffers`, `ControlBuffers`: the standard ones,
/// or a beacon's smaller ones).
public struct HeraldPeripheralApplication<Source: HeraldPayloadSource, Delegate: HeraldPeripheralDelegate,
                                          let links: Int, let payloadCapacity: Int, let signalCapacity: Int,
                                          Offer: HeraldServerOffer>: LEApplication {
    public var peripheral: HeraldPeripheral<Source, Offer, links, payloadCapacity, signalCapacity>
    public var delegate: Delegate

    public init(peripheral: HeraldPeripheral<Source, Offer, links, payloadCapacity, signalCapacity>, delegate: Delegate) {
        precondition(Delegate.rotatesAddress || peripheral.advertiser.configuration.irk == nil,
                     "HeraldPeripheralApplication: an IRK was configured but the delegate's rotatesAddress is false")
        self.peripheral = peripheral
        self.delegate = delegate
    }

    public static var serverFeatures: GATTServerFeatures { Offer.serverFeatures }
    public typealias PrepareQueue = Offer.PrepareQueue
    public typealias GATTHandles = Offer.GATTHandles
    public typealias LinkBuffers = Offer.LinkBuffers
    public typealias ControlBuffers = Offer.ControlBuffers
    /// Its `inboundLinks` is the default `.open`: no central is ever refused, so no list is kept.
    public typealias RefusedCentrals = NoSilentCentrals
    /// It only advertises and is connected to (the sensor, which also scans and connects, embeds
    /// `HeraldPeripheral` itself).
    public static var scans: Bool { false }
    public static var connectsAsCentral: Bool { false }
    /// A phone reads the payload and goes: no use for the LE 2M PHY (`LEApplication.asksForLE2MPHY`).
    public static var asksForLE2MPHY: Bool { false }
    /// As the delegate says (`HeraldPeripheralDelegate.tracksPHYUpdates`).
    public static var tracksPHYUpdates: Bool { Delegate.tracksPHYUpdates }
    public static var recordsInputDrops: Bool { Delegate.recordsInputDrops }
    public typealias InputDrops = Delegate.InputDrops
    public typealias StackCounters = Delegate.StackCounters
    public static var tracksDataLengthChanges: Bool { Delegate.tracksDataLengthChanges }
    public static var probesControllerLiveness: Bool { Delegate.probesControllerLiveness }
    /// It never asks a central for other connection parameters, and runs no GATT client.
    public static var requestsConnectionParameters: Bool { false }
    public static var hasGATTClient: Bool { false }
    /// A `HeraldLink` carries no timing, and nothing here reads a link's: LE Connection Update
    /// Complete is dropped unread (`LEApplication.tracksConnectionTiming`).
    public static var tracksConnectionTiming: Bool { false }

    public mutating func read<S: ByteSink>(id: UInt16, link: UInt16, offset: Int, into sink: inout S) -> ATTErrorCode? {
        peripheral.read(id: id, link: link, offset: offset, into: &sink, delegate: &delegate)
    }

    public mutating func write(id: UInt16, link: UInt16, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
        peripheral.write(id: id, link: link, offset: offset, value: value, delegate: &delegate)
    }

    public mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout Control) {
        peripheral.stackDidBecomeReady(info, now: now, control: &control, delegate: &delegate)
    }

    public mutating func stackControllerDidFail(_ failure: ControllerFailure, now: UInt64, control: inout Control) {
        peripheral.stackControllerDidFail()
    }

    public mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout Control) {
        peripheral.stackDidConnect(link, now: now, control: &control, delegate: &delegate)
    }

    public mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout Control) {
        peripheral.stackDidDisconnect(handle: handle, reason: reason, now: now, control: &control, delegate: &delegate)
    }

    public mutating func stackDidUpdatePHY(handle: UInt16, _ phy: LinkPHY, now: UInt64, control: inout Control) {
        peripheral.stackDidUpdatePHY(handle: handle, phy, delegate: &delegate)
    }

    public mutating func stackCommandDidComplete(tag: CommandTag, opcode: HCIOpcode, status: HCIStatus,
                                                 returnParameters: Span<UInt8>, control: inout Control) {
        _ = peripheral.stackCommandDidComplete(tag: tag, opcode: opcode, status: status, returnParameters: returnParameters,
                                               control: &control, delegate: &delegate)
    }

    /// Asked of the type first, so that an application that never follows the period grid has no
    /// timer code at all, not only no timer.
    public var applicationDeadline: UInt64? {
        HeraldPeripheral<Source, Offer, links, payloadCapacity, signalCapacity>.tracksPeriods(Delegate.self) ? peripheral.deadline : nil
    }

    public mutating func stackTimerFired(now: UInt64, control: inout Control) {
        guard HeraldPeripheral<Source, Offer, links, payloadCapacity, signalCapacity>.tracksPeriods(Delegate.self) else { return }
        peripheral.stackTimerFired(now: now, control: &control, delegate: &delegate)
    }
}
