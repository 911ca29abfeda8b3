import BluetoothHost

/// What an application holds (Herald API `SensorArray`): the sensors, started and stopped together,
/// with their events fanned out to the application's delegates. Today it holds the Herald BLE
/// sensor; it is the stack's application, forwarding every stack callback to that sensor.
///
/// Several delegates are one generic value: `SensorArray(supplier: s, delegate: SensorDelegatePair(a, b))`.
public struct SensorArray<Supplier: PayloadDataSupplier, Delegate: SensorDelegate, let devices: Int, let links: Int,
                          Peripheral: HeraldSensorPeripheral>: LEApplication {
    public var ble: HeraldSensor<Supplier, Delegate, devices, links, Peripheral>

    public init(supplier: Supplier, delegate: Delegate, peripheral: Peripheral,
                configuration: HeraldSensorConfiguration = HeraldSensorConfiguration()) {
        ble = HeraldSensor(supplier: supplier, delegate: delegate, peripheral: peripheral, configuration: configuration)
    }

    public var delegate: Delegate {
        get { ble.delegate }
        _modify { yield &ble.delegate }
    }

    /// Starts every sensor (the BLE one as soon as the controller is ready).
    public mutating func start(now: UInt64, control: inout StackControl) {
        ble.start(now: now, control: &control)
        ble.delegate.sensor(.array, didUpdateState: .on)
    }

    public mutating func stop(control: inout StackControl) {
        ble.stop(control: &control)
        ble.delegate.sensor(.array, didUpdateState: .off)
    }

    /// Sends `data` to one target, ahead of any other work for it. False if too long or unknown.
    @discardableResult
    public mutating func immediateSend(_ data: Span<UInt8>, to target: TargetIdentifier, now: UInt64,
                                       control: inout StackControl) -> Bool {
        ble.immediateSend(data, to: target, now: now, control: &control)
    }

    /// Sends `data` to every Herald device updated in the last 60 s; returns how many.
    @discardableResult
    public mutating func immediateSendAll(_ data: Span<UInt8>, now: UInt64, control: inout StackControl) -> Int {
        ble.immediateSendAll(data, now: now, control: &control)
    }

    // MARK: LEApplication, forwarded

    public static var inboundLinks: InboundLinkPolicy { HeraldSensor<Supplier, Delegate, devices, links, Peripheral>.inboundLinks }
    public static var asksForLE2MPHY: Bool { false }

    public mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        ble.stackDidBecomeReady(info, now: now, control: &control)
    }
    public mutating func stackControllerDidFail(_ failure: ControllerFailure, now: UInt64, control: inout StackControl) {
        ble.stackControllerDidFail(failure, now: now, control: &control)
    }
    public mutating func stackDidReceive(advertisingReport: borrowing AdvertisingReport, now: UInt64, control: inout StackControl) {
        ble.stackDidReceive(advertisingReport: advertisingReport, now: now, control: &control)
    }
    public mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) {
        ble.stackDidConnect(link, now: now, control: &control)
    }
    public mutating func stackDidFailToConnect(to peer: DeviceAddress, status: HCIStatus, now: UInt64, control: inout StackControl) {
        ble.stackDidFailToConnect(to: peer, status: status, now: now, control: &control)
    }
    public mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControl) {
        ble.stackDidDisconnect(handle: handle, reason: reason, now: now, control: &control)
    }
    public mutating func stackDidUpdatePHY(handle: UInt16, _ phy: LinkPHY, now: UInt64, control: inout StackControl) {
        ble.stackDidUpdatePHY(handle: handle, phy, now: now, control: &control)
    }
    public mutating func stackDidReceiveATT(handle: UInt16, pdu: Span<UInt8>, now: UInt64, control: inout StackControl) {
        ble.stackDidReceiveATT(handle: handle, pdu: pdu, now: now, control: &control)
    }
    public mutating func stackIndicationConfirmed(handle: UInt16, attribute: UInt16, now: UInt64, control: inout StackControl) {
        ble.stackIndicationConfirmed(handle: handle, attribute: attribute, now: now, control: &control)
    }
    public mutating func stackCommandDidComplete(tag: CommandTag, opcode: HCIOpcode, status: HCIStatus,
                                                 returnParameters: Span<UInt8>, control: inout StackControl) {
        ble.stackCommandDidComplete(tag: tag, opcode: opcode, status: status, returnParameters: returnParameters, control: &control)
    }
    public mutating func stackDidReceive(event: borrowing HCIEventPacket, control: inout StackControl) {
        ble.stackDidReceive(event: event, control: &control)
    }
    public var applicationDeadline: UInt64? { ble.applicationDeadline }
    public mutating func applicationDeadlineInPlace() -> UInt64? { ble.applicationDeadlineInPlace() }
    public mutating func stackTimerFired(now: UInt64, control: inout StackControl) {
        ble.stackTimerFired(now: now, control: &control)
    }

    // MARK: GATTServerDelegate, forwarded (the peripheral half answers these)

    public mutating func read<S: ByteSink>(id: UInt16, connection: Int, offset: Int, into sink: inout S) -> ATTErrorCode? {
        ble.read(id: id, connection: connection, offset: offset, into: &sink)
    }
    public mutating func write(id: UInt16, connection: Int, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
        ble.write(id: id, connection: connection, offset: offset, value: value)
    }
    public mutating func clientConfigurationChanged(valueHandle: UInt16, connection: Int, configuration: GATTClientConfiguration) {
        ble.clientConfigurationChanged(valueHandle: valueHandle, connection: connection, configuration: configuration)
    }
    public mutating func storedValueWritten(handle: UInt16, connection: Int) {
        ble.storedValueWritten(handle: handle, connection: connection)
    }
}

extension SensorArray where Peripheral == NoSensorPeripheral {
    /// An array whose BLE sensor only scans, reads and shares (no peripheral role).
    public init(supplier: Supplier, delegate: Delegate, configuration: HeraldSensorConfiguration = HeraldSensorConfiguration()) {
        self.init(supplier: supplier, delegate: delegate, peripheral: NoSensorPeripheral(), configuration: configuration)
    }
}
