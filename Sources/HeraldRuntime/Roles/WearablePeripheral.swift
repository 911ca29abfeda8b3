import BluetoothHost
import Herald

/// The wearable's peripheral half with its events also reported to a `HeraldPeripheralDelegate` of the
/// runtime's (the JSON printer): `HeraldSensor` turns peripheral events into sensor events for its own
/// core, and this wrapper lets `herald wearable` keep printing `connected`, `payload-read`, `signal`,
/// `address` … as `herald beacon` does, without the sensor knowing.
public struct WearablePeripheral<Inner: HeraldSensorPeripheral, Observer: HeraldPeripheralDelegate>: HeraldSensorPeripheral {
    public var inner: Inner
    public var observer: Observer

    public init(_ inner: Inner, observer: Observer) {
        self.inner = inner
        self.observer = observer
    }

    /// Runs `body` with a delegate that reports to both `delegate` and the observer. The sensor's core
    /// is large (device database, secret key), so it is reached through a pointer rather than copied.
    mutating func tee<D: HeraldPeripheralDelegate, R>(_ delegate: inout D, _ body: (inout Inner, inout TeeDelegate<D, Observer>) -> R) -> R {
        withUnsafeMutablePointer(to: &delegate) { pointer in
            var t = TeeDelegate(first: pointer, second: observer)
            let r = body(&inner, &t)
            observer = t.second
            return r
        }
    }

    public func owns(id: UInt16) -> Bool { inner.owns(id: id) }
    public mutating func read<S: ByteSink, D: HeraldPeripheralDelegate>(
        id: UInt16, connection: Int, offset: Int, into sink: inout S, delegate: inout D) -> ATTErrorCode? {
        tee(&delegate) { p, d in p.read(id: id, connection: connection, offset: offset, into: &sink, delegate: &d) }
    }
    public mutating func write<D: HeraldPeripheralDelegate>(
        id: UInt16, connection: Int, offset: Int, value: Span<UInt8>, delegate: inout D) -> ATTErrorCode? {
        tee(&delegate) { p, d in p.write(id: id, connection: connection, offset: offset, value: value, delegate: &d) }
    }
    public mutating func stackDidBecomeReady<D: HeraldPeripheralDelegate>(
        _ info: ControllerInfo, now: UInt64, control: inout StackControl, delegate: inout D) {
        tee(&delegate) { p, d in p.stackDidBecomeReady(info, now: now, control: &control, delegate: &d) }
    }
    public mutating func stackControllerDidFail() { inner.stackControllerDidFail() }
    public mutating func stackDidConnect<D: HeraldPeripheralDelegate>(
        _ link: ConnectionSummary, now: UInt64, control: inout StackControl, delegate: inout D) {
        tee(&delegate) { p, d in p.stackDidConnect(link, now: now, control: &control, delegate: &d) }
    }
    public mutating func stackDidDisconnect<D: HeraldPeripheralDelegate>(
        handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControl, delegate: inout D) {
        tee(&delegate) { p, d in p.stackDidDisconnect(handle: handle, reason: reason, now: now, control: &control, delegate: &d) }
    }
    public mutating func stackDidUpdatePHY<D: HeraldPeripheralDelegate>(handle: UInt16, _ phy: LinkPHY, delegate: inout D) {
        tee(&delegate) { p, d in p.stackDidUpdatePHY(handle: handle, phy, delegate: &d) }
    }
    public var deadline: UInt64? { inner.deadline }
    public var addressSettled: Bool { inner.addressSettled }
    public mutating func stackTimerFired<D: HeraldPeripheralDelegate>(now: UInt64, control: inout StackControl, delegate: inout D) {
        tee(&delegate) { p, d in p.stackTimerFired(now: now, control: &control, delegate: &d) }
    }
    public mutating func stackCommandDidComplete<D: HeraldPeripheralDelegate>(
        tag: CommandTag, opcode: HCIOpcode, status: HCIStatus, returnParameters: Span<UInt8>,
        control: inout StackControl, delegate: inout D) -> Bool {
        tee(&delegate) { p, d in
            p.stackCommandDidComplete(tag: tag, opcode: opcode, status: status, returnParameters: returnParameters,
                                      control: &control, delegate: &d)
        }
    }
}

/// Two peripheral delegates as one; the first is borrowed for the duration of one call.
struct TeeDelegate<First: HeraldPeripheralDelegate, Second: HeraldPeripheralDelegate>: HeraldPeripheralDelegate {
    let first: UnsafeMutablePointer<First>
    var second: Second

    mutating func heraldPeripheral(didConnect link: HeraldLink) {
        first.pointee.heraldPeripheral(didConnect: link); second.heraldPeripheral(didConnect: link)
    }
    mutating func heraldPeripheral(didUpdatePHY phy: LinkPHY, on link: HeraldLink) {
        first.pointee.heraldPeripheral(didUpdatePHY: phy, on: link); second.heraldPeripheral(didUpdatePHY: phy, on: link)
    }
    mutating func heraldPeripheral(didDisconnect link: HeraldLink, reason: HCIStatus) {
        first.pointee.heraldPeripheral(didDisconnect: link, reason: reason); second.heraldPeripheral(didDisconnect: link, reason: reason)
    }
    mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink) {
        first.pointee.heraldPeripheral(didServePayload: payload, to: link); second.heraldPeripheral(didServePayload: payload, to: link)
    }
    mutating func heraldPeripheral(didReceivePayload payload: Span<UInt8>, from link: HeraldLink) {
        first.pointee.heraldPeripheral(didReceivePayload: payload, from: link); second.heraldPeripheral(didReceivePayload: payload, from: link)
    }
    mutating func heraldPeripheral(didMeasureRSSI rssi: Int16, from link: HeraldLink) {
        first.pointee.heraldPeripheral(didMeasureRSSI: rssi, from: link); second.heraldPeripheral(didMeasureRSSI: rssi, from: link)
    }
    mutating func heraldPeripheral(didShare payloads: SharedPayloadIterator, rssi: Int16, from link: HeraldLink) {
        first.pointee.heraldPeripheral(didShare: payloads, rssi: rssi, from: link); second.heraldPeripheral(didShare: payloads, rssi: rssi, from: link)
    }
    mutating func heraldPeripheral(didReceiveImmediateSend data: Span<UInt8>, from link: HeraldLink) {
        first.pointee.heraldPeripheral(didReceiveImmediateSend: data, from: link); second.heraldPeripheral(didReceiveImmediateSend: data, from: link)
    }
    mutating func heraldPeripheral(didKeepAwake link: HeraldLink) {
        first.pointee.heraldPeripheral(didKeepAwake: link); second.heraldPeripheral(didKeepAwake: link)
    }
    mutating func heraldPeripheral(didRejectSignalWrite fragment: Span<UInt8>, from link: HeraldLink) {
        first.pointee.heraldPeripheral(didRejectSignalWrite: fragment, from: link); second.heraldPeripheral(didRejectSignalWrite: fragment, from: link)
    }
    mutating func heraldPeripheral(didChangeAddress address: BDAddress, unixMillis: Int64) {
        first.pointee.heraldPeripheral(didChangeAddress: address, unixMillis: unixMillis); second.heraldPeripheral(didChangeAddress: address, unixMillis: unixMillis)
    }
    mutating func heraldPeripheral(commandFailed opcode: HCIOpcode, status: HCIStatus) {
        first.pointee.heraldPeripheral(commandFailed: opcode, status: status); second.heraldPeripheral(commandFailed: opcode, status: status)
    }
}
