import BluetoothHost

/// The peripheral half of the sensor, as `HeraldSensor` drives it: the Herald GATT service (payload
/// reads, signal writes) and advertising. `HeraldPeripheral` (Sources/Herald/Peripheral) conforms;
/// `NoSensorPeripheral` is a sensor that only scans and reads (receive-only).
///
/// Generic, never existential: the sensor is specialised for its peripheral. Events come back
/// through `HeraldPeripheralDelegate`, which the sensor's `SensorCore` implements.
public protocol HeraldSensorPeripheral {
    /// What the sensor's GATT server offers (`HeraldServerOffer`).
    associatedtype Offer: HeraldServerOffer
    /// True for the dynamic attribute ids this peripheral serves.
    func owns(id: UInt16) -> Bool
    mutating func read<S: ByteSink, D: HeraldPeripheralDelegate>(
        id: UInt16, link: UInt16, offset: Int, into sink: inout S, delegate: inout D) -> ATTErrorCode?
    mutating func write<D: HeraldPeripheralDelegate>(
        id: UInt16, link: UInt16, offset: Int, value: Span<UInt8>, delegate: inout D) -> ATTErrorCode?
    mutating func stackDidBecomeReady<D: HeraldPeripheralDelegate, B: StackControlBuffers>(
        _ info: ControllerInfo, now: UInt64, control: inout StackControlOf<B>, delegate: inout D)
    mutating func stackControllerDidFail()
    /// Called for every link, both roles.
    mutating func stackDidConnect<D: HeraldPeripheralDelegate, B: StackControlBuffers>(
        _ link: ConnectionSummary, now: UInt64, control: inout StackControlOf<B>, delegate: inout D)
    mutating func stackDidDisconnect<D: HeraldPeripheralDelegate, B: StackControlBuffers>(
        handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControlOf<B>, delegate: inout D)
    /// A link's PHYs changed (every link, both roles, as `stackDidConnect`).
    mutating func stackDidUpdatePHY<D: HeraldPeripheralDelegate>(handle: UInt16, _ phy: LinkPHY, delegate: inout D)
    var deadline: UInt64? { get }
    /// False while the controller's random address is still our identity address and a resolvable
    /// private one is being made (`HeraldAdvertiser.addressSettled`): the sensor's central waits.
    var addressSettled: Bool { get }
    /// `deadline` read in place (the sensor asks on every stack tick; see `HeraldAdvertiser`).
    mutating func deadlineInPlace() -> UInt64?
    mutating func stackTimerFired<D: HeraldPeripheralDelegate, B: StackControlBuffers>(now: UInt64, control: inout StackControlOf<B>, delegate: inout D)
    /// True when the completion was the peripheral's own command.
    mutating func stackCommandDidComplete<D: HeraldPeripheralDelegate, B: StackControlBuffers>(
        tag: CommandTag, opcode: HCIOpcode, status: HCIStatus, returnParameters: Span<UInt8>,
        control: inout StackControlOf<B>, delegate: inout D) -> Bool
}

extension HeraldSensorPeripheral {
    public mutating func deadlineInPlace() -> UInt64? { deadline }
    public var addressSettled: Bool { true }
    public mutating func stackDidUpdatePHY<D: HeraldPeripheralDelegate>(handle: UInt16, _ phy: LinkPHY, delegate: inout D) {}
}

extension HeraldPeripheral {
    public var addressSettled: Bool { advertiser.addressSettled }
}

/// Only a peripheral without a payload source of its own can be a sensor's: the sensor's supplier is
/// the one provider of our payload (`SensorCore` answers `heraldPeripheral(payloadAt:into:)`), so a
/// sensor cannot be built with a second one that would be silently passed over.
extension HeraldPeripheral: HeraldSensorPeripheral where Source == NoPayloadSource {}

/// No peripheral role: nothing advertised, nothing served.
public struct NoSensorPeripheral: HeraldSensorPeripheral {
    /// The stack's GAP and GATT services alone, as before there was a choice.
    public typealias Offer = StandardServerOffer
    public init() {}
    public func owns(id: UInt16) -> Bool { false }
    public mutating func read<S: ByteSink, D: HeraldPeripheralDelegate>(
        id: UInt16, link: UInt16, offset: Int, into sink: inout S, delegate: inout D) -> ATTErrorCode? { .readNotPermitted }
    public mutating func write<D: HeraldPeripheralDelegate>(
        id: UInt16, link: UInt16, offset: Int, value: Span<UInt8>, delegate: inout D) -> ATTErrorCode? { .writeNotPermitted }
    public mutating func stackDidBecomeReady<D: HeraldPeripheralDelegate, B: StackControlBuffers>(
        _ info: ControllerInfo, now: UInt64, control: inout StackControlOf<B>, delegate: inout D) {}
    public mutating func stackControllerDidFail() {}
    public mutating func stackDidConnect<D: HeraldPeripheralDelegate, B: StackControlBuffers>(
        _ link: ConnectionSummary, now: UInt64, control: inout StackControlOf<B>, delegate: inout D) {}
    public mutating func stackDidDisconnect<D: HeraldPeripheralDelegate, B: StackControlBuffers>(
        handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControlOf<B>, delegate: inout D) {}
    public var deadline: UInt64? { nil }
    public mutating func stackTimerFired<D: HeraldPeripheralDelegate, B: StackControlBuffers>(now: UInt64, control: inout StackControlOf<B>, delegate: inout D) {}
    public mutating func stackCommandDidComplete<D: HeraldPeripheralDelegate, B: StackControlBuffers>(
        tag: CommandTag, opcode: HCIOpcode, status: HCIStatus, returnParameters: Span<UInt8>,
        control: inout StackControlOf<B>, delegate: inout D) -> Bool { false }
}

/// What the peripheral reports becomes sensor events: a peer that writes to us is a target like any
/// other (filed as receive-only if we never saw it advertise). Every event then reaches the
/// application's delegate as it came (`SensorDelegate` is a `HeraldPeripheralDelegate`), after the
/// sensor has acted on it.
extension SensorCore: HeraldPeripheralDelegate {
    public static var rotatesAddress: Bool { Delegate.rotatesAddress }
    public static var receivesSignals: Bool { Delegate.receivesSignals }
    public static var usesLEEncrypt: Bool { Delegate.usesLEEncrypt }

    public mutating func heraldPeripheral(didBecomeReady address: BDAddress, now: UInt64) {
        delegate.heraldPeripheral(didBecomeReady: address, now: now)
    }
    public mutating func heraldPeripheral(didConnect link: HeraldLink) { delegate.heraldPeripheral(didConnect: link) }
    public mutating func heraldPeripheral(didDisconnect link: HeraldLink, reason: HCIStatus) {
        delegate.heraldPeripheral(didDisconnect: link, reason: reason)
    }
    public mutating func heraldPeripheral(didUpdatePHY phy: LinkPHY, on link: HeraldLink) {
        delegate.heraldPeripheral(didUpdatePHY: phy, on: link)
    }
    public mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink) {
        delegate.heraldPeripheral(didServePayload: payload, to: link)
    }
    public mutating func heraldPeripheral(didChangeAddress address: BDAddress, unixMillis: Int64) {
        central.advertisedAddress = (address, now)
        central.stir(address.seedValue)
        delegate.heraldPeripheral(didChangeAddress: address, unixMillis: unixMillis)
    }
    public mutating func heraldPeripheral(didReceivePayload payload: Span<UInt8>, from link: HeraldLink) {
        central.peerDidWrite(payload: payload, from: link.peer, now: now, delegate: &delegate)
        delegate.heraldPeripheral(didReceivePayload: payload, from: link)
    }
    public mutating func heraldPeripheral(didMeasureRSSI rssi: Int16, from link: HeraldLink) {
        central.peerDidWrite(rssi: rssi, from: link.peer, now: now, delegate: &delegate)
        delegate.heraldPeripheral(didMeasureRSSI: rssi, from: link)
    }
    public mutating func heraldPeripheral(didShare payloads: SharedPayloadIterator, rssi: Int16, from link: HeraldLink) {
        // Split with our supplier, which knows the payload layout in use.
        let list = SharedPayloads(splitting: payloads.bytes, with: supplier)
        central.peerDidShare(list, rssi: rssi, from: link.peer, now: now, delegate: &delegate)
        delegate.heraldPeripheral(didShare: payloads, rssi: rssi, from: link)
    }
    public mutating func heraldPeripheral(didReceiveImmediateSend data: Span<UInt8>, from link: HeraldLink) {
        central.peerDidSend(immediate: data, from: link.peer, now: now, delegate: &delegate)
        delegate.heraldPeripheral(didReceiveImmediateSend: data, from: link)
    }
    public mutating func heraldPeripheral(didKeepAwake link: HeraldLink) { delegate.heraldPeripheral(didKeepAwake: link) }
    public mutating func heraldPeripheral(didRejectSignalWrite fragment: Span<UInt8>, from link: HeraldLink) {
        delegate.heraldPeripheral(didRejectSignalWrite: fragment, from: link)
    }
    public mutating func heraldPeripheral(commandFailed opcode: HCIOpcode, status: HCIStatus) {
        delegate.heraldPeripheral(commandFailed: opcode, status: status)
    }
    /// The peripheral serves the sensor's supplier: one provider of our payload for both halves.
    public mutating func heraldPeripheral<S: ByteSink>(payloadAt time: Int64, into sink: inout S) -> Bool? {
        supplier.writePayload(at: time, to: &sink)
    }
}
