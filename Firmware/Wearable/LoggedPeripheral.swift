// The sensor's peripheral half with what it does also written to the log: `HeraldSensor` turns the
// peripheral's events into sensor events for its own core (a peer's signal writes), so serving the
// payload, address changes and failed commands would otherwise leave no trace on UART1.
import BluetoothHost
import Herald

struct LoggedPeripheral: HeraldSensorPeripheral {
    var inner: WearablePeripheral
    var shares = 0

    /// Runs `body` with a delegate that logs, then forwards to `delegate` (the sensor's core, reached
    /// through a pointer: it holds the device database and must not be copied).
    mutating func logging<D: HeraldPeripheralDelegate, R>(
        _ delegate: inout D, _ body: (inout WearablePeripheral, inout LogDelegate<D>) -> R
    ) -> R {
        withUnsafeMutablePointer(to: &delegate) { pointer in
            var log = LogDelegate(next: pointer, shares: shares)
            let r = body(&inner, &log)
            shares = log.shares
            return r
        }
    }

    func owns(id: UInt16) -> Bool { inner.owns(id: id) }
    mutating func read<S: ByteSink, D: HeraldPeripheralDelegate>(
        id: UInt16, connection: Int, offset: Int, into sink: inout S, delegate: inout D) -> ATTErrorCode? {
        logging(&delegate) { p, d in p.read(id: id, connection: connection, offset: offset, into: &sink, delegate: &d) }
    }
    mutating func write<D: HeraldPeripheralDelegate>(
        id: UInt16, connection: Int, offset: Int, value: Span<UInt8>, delegate: inout D) -> ATTErrorCode? {
        logging(&delegate) { p, d in p.write(id: id, connection: connection, offset: offset, value: value, delegate: &d) }
    }
    mutating func stackDidBecomeReady<D: HeraldPeripheralDelegate>(
        _ info: ControllerInfo, now: UInt64, control: inout StackControl, delegate: inout D) {
        Log.put("sensor didUpdateState ready t="); Log.put(now); Log.put("ms identity="); Log.put(address: info.address); Log.end()
        logging(&delegate) { p, d in p.stackDidBecomeReady(info, now: now, control: &control, delegate: &d) }
    }
    mutating func stackControllerDidFail() {
        Log.line("sensor controller failed")
        inner.stackControllerDidFail()
    }
    mutating func stackDidConnect<D: HeraldPeripheralDelegate>(
        _ link: ConnectionSummary, now: UInt64, control: inout StackControl, delegate: inout D) {
        Log.put("connected handle="); Log.put(link.handle); Log.put(link.role == .central ? " role=central" : " role=peripheral")
        Log.put(" peer="); Log.put(address: link.peer.address); Log.end()
        logging(&delegate) { p, d in p.stackDidConnect(link, now: now, control: &control, delegate: &d) }
    }
    mutating func stackDidDisconnect<D: HeraldPeripheralDelegate>(
        handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControl, delegate: inout D) {
        Log.put("disconnected handle="); Log.put(handle); Log.put(" reason="); Log.putHex(reason.rawValue); Log.end()
        logging(&delegate) { p, d in p.stackDidDisconnect(handle: handle, reason: reason, now: now, control: &control, delegate: &d) }
    }
    var deadline: UInt64? { inner.deadline }
    mutating func deadlineInPlace() -> UInt64? { inner.deadlineInPlace() }
    mutating func stackTimerFired<D: HeraldPeripheralDelegate>(now: UInt64, control: inout StackControl, delegate: inout D) {
        logging(&delegate) { p, d in p.stackTimerFired(now: now, control: &control, delegate: &d) }
    }
    mutating func stackCommandDidComplete<D: HeraldPeripheralDelegate>(
        tag: CommandTag, opcode: HCIOpcode, status: HCIStatus, returnParameters: Span<UInt8>,
        control: inout StackControl, delegate: inout D) -> Bool {
        logging(&delegate) { p, d in
            p.stackCommandDidComplete(tag: tag, opcode: opcode, status: status, returnParameters: returnParameters,
                                      control: &control, delegate: &d)
        }
    }
}

/// Logs the peripheral events a tester looks for, and forwards every event to the sensor's core.
struct LogDelegate<Next: HeraldPeripheralDelegate>: HeraldPeripheralDelegate {
    let next: UnsafeMutablePointer<Next>
    var shares: Int

    mutating func heraldPeripheral(didConnect link: HeraldLink) { next.pointee.heraldPeripheral(didConnect: link) }
    mutating func heraldPeripheral(didDisconnect link: HeraldLink, reason: HCIStatus) {
        next.pointee.heraldPeripheral(didDisconnect: link, reason: reason)
    }
    mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink) {
        shares += 1
        Log.put("sensor didShare payload="); Log.put(hex: payload); Log.put(" to="); Log.put(address: link.peer.address)
        Log.put(" count="); Log.put(shares); Log.end()
        next.pointee.heraldPeripheral(didServePayload: payload, to: link)
    }
    mutating func heraldPeripheral(didReceivePayload payload: Span<UInt8>, from link: HeraldLink) {
        Log.put("sensor didReceive payload="); Log.put(hex: payload); Log.put(" from="); Log.put(address: link.peer.address)
        Log.put(" via=signal"); Log.end()
        next.pointee.heraldPeripheral(didReceivePayload: payload, from: link)
    }
    mutating func heraldPeripheral(didMeasureRSSI rssi: Int16, from link: HeraldLink) {
        next.pointee.heraldPeripheral(didMeasureRSSI: rssi, from: link)
    }
    mutating func heraldPeripheral(didShare payloads: SharedPayloadIterator, rssi: Int16, from link: HeraldLink) {
        next.pointee.heraldPeripheral(didShare: payloads, rssi: rssi, from: link)
    }
    mutating func heraldPeripheral(didReceiveImmediateSend data: Span<UInt8>, from link: HeraldLink) {
        next.pointee.heraldPeripheral(didReceiveImmediateSend: data, from: link)
    }
    mutating func heraldPeripheral(didKeepAwake link: HeraldLink) { next.pointee.heraldPeripheral(didKeepAwake: link) }
    mutating func heraldPeripheral(didRejectSignalWrite fragment: Span<UInt8>, from link: HeraldLink) {
        next.pointee.heraldPeripheral(didRejectSignalWrite: fragment, from: link)
    }
    mutating func heraldPeripheral(didChangeAddress address: BDAddress, unixMillis: Int64) {
        Log.put("sensor didChangeAddress address="); Log.put(address: address); Log.end()
        next.pointee.heraldPeripheral(didChangeAddress: address, unixMillis: unixMillis)
    }
    mutating func heraldPeripheral(commandFailed opcode: HCIOpcode, status: HCIStatus) {
        Log.put("command failed opcode="); Log.put(opcode.rawValue); Log.put(" status="); Log.putHex(status.rawValue); Log.end()
        next.pointee.heraldPeripheral(commandFailed: opcode, status: status)
    }
}
