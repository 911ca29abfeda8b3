import BluetoothHost

/// The Herald application of the stack: the BLE sensor with an optional peripheral half. Its central
/// half scans and reads (`HeraldCentral`, whose links each own a GATT client running the central
/// procedure); its peripheral half (`HeraldPeripheral`: Herald GATT service, payload serving, signal
/// writes, advertising) is a generic part, `NoSensorPeripheral` to only scan. It is what the Herald
/// API calls `SensorArray` (one sensor here, so the array is the sensor): the stack calls it, and it
/// calls its parts directly, with no layer between that only forwards.
///
/// Generic over the payload supplier, the delegate (compose several with `SensorDelegatePair`; it
/// hears both halves, `SensorDelegate` being a `HeraldPeripheralDelegate`) and the peripheral, sized
/// by `devices` (database capacity) and `links` (simultaneous central connections).
public struct HeraldSensor<Supplier: PayloadDataSupplier, Delegate: SensorDelegate, let devices: Int, let links: Int,
                           Peripheral: HeraldSensorPeripheral>: LEApplication {
    /// Supplier, delegate and central together, so a component of the sensor (the GATT clients, the
    /// peripheral) can report into them while it is itself being mutated.
    public var core: SensorCore<Supplier, Delegate, devices, links>
    /// The Herald GATT service and advertising; its events reach `core`.
    public var peripheral: Peripheral
    /// The application wants the sensor running (it starts whenever the controller is ready).
    public internal(set) var wantsOn = false
    public internal(set) var controllerReady = false

    public init(supplier: Supplier, delegate: Delegate, peripheral: Peripheral,
                configuration: HeraldSensorConfiguration = HeraldSensorConfiguration()) {
        core = SensorCore(supplier: supplier, delegate: delegate,
                          central: HeraldCentral(configuration: configuration, clientMTU: Self.linkMTU))
        self.peripheral = peripheral
    }

    /// What the server offers is the peripheral's (`HeraldServerOffer`), not the delegate's.
    public static var serverFeatures: GATTServerFeatures { Peripheral.Offer.serverFeatures }

    /// The sensor's links: `links` of the stack's kept for reading others (its central role), so
    /// centrals that connect to us can never take them all; a central silent for 10 s is
    /// disconnected, and one that never said anything is refused for 60 s when it comes back. A
    /// Herald phone reads within a second or two of connecting (discovery, then the payload).
    public static var inboundLinks: InboundLinkPolicy {
        InboundLinkPolicy(reservedForCentral: links, idleBound: 10_000, refuseSilentFor: 60_000)
    }
    /// A Herald link carries a payload read (tens of octets) and ends: the LE 2M PHY saves nothing
    /// there, and asking for it cost links on Zephyr's controller (`LEApplication.asksForLE2MPHY`).
    public static var asksForLE2MPHY: Bool { false }
    /// As the delegate says (`HeraldPeripheralDelegate.tracksPHYUpdates`, `recordsInputDrops`).
    public static var tracksPHYUpdates: Bool { Delegate.tracksPHYUpdates }
    public static var recordsInputDrops: Bool { Delegate.recordsInputDrops }
    public typealias InputDrops = Delegate.InputDrops
    public typealias StackCounters = Delegate.StackCounters
    public static var tracksDataLengthChanges: Bool { Delegate.tracksDataLengthChanges }
    public static var probesControllerLiveness: Bool { Delegate.probesControllerLiveness }
    /// It never asks a central for other connection parameters.
    public static var requestsConnectionParameters: Bool { false }
    /// A `HeraldLink` carries no timing, and nothing here reads a link's: LE Connection Update
    /// Complete is dropped unread (`LEApplication.tracksConnectionTiming`).
    public static var tracksConnectionTiming: Bool { false }
    public typealias PrepareQueue = Peripheral.Offer.PrepareQueue
    public typealias GATTHandles = Peripheral.Offer.GATTHandles
    /// The stack's buffers are the peripheral's offer's (`HeraldServerOffer.LinkBuffers`,
    /// `ControlBuffers`): the standard ones unless the image sizes them.
    public typealias LinkBuffers = Peripheral.Offer.LinkBuffers
    public typealias ControlBuffers = Peripheral.Offer.ControlBuffers
    /// The ATT_MTU both halves agree to at most: what each link's buffers hold. The server's is
    /// bounded by the stack (`LEStack`); the central's GATT clients offer no more (`HeraldCentral.clientMTU`).
    static var linkMTU: UInt16 { UInt16(LinkBuffers.PDU.capacity) }

    public var supplier: Supplier {
        get { core.supplier }
        _modify { yield &core.supplier }
    }
    public var delegate: Delegate {
        get { core.delegate }
        _modify { yield &core.delegate }
    }
    /// For the application and tests. Inside the sensor every access goes through `core.central`:
    /// reading a field through this getter returns the whole central by value, which on a
    /// microcontroller copied 6 KB onto the stack (`applicationDeadline` did it on every loop turn).
    public var central: HeraldCentral<devices, links> {
        get { core.central }
        _modify { yield &core.central }
    }

    // MARK: Control from the application

    /// Starts sensing now if the controller is ready, else as soon as it is. The application's
    /// request is reported at once (`.array`, as the Herald API's `SensorArray` does); the BLE
    /// sensor's own `.on` follows when its central starts.
    public mutating func start(now: UInt64, control: inout Control) {
        if !wantsOn { delegate.sensor(.array, didUpdateState: .on) }
        wantsOn = true
        startOnceAddressSettled(now: now, control: &control)
    }

    public mutating func stop(control: inout Control) {
        if wantsOn { delegate.sensor(.array, didUpdateState: .off) }
        wantsOn = false
        guard core.central.isOn else { return }
        core.central.stop(control: &control)
        delegate.sensor(.ble, didUpdateState: .off)
    }

    @discardableResult
    public mutating func immediateSend(_ data: Span<UInt8>, to target: TargetIdentifier, now: UInt64, control: inout Control) -> Bool {
        core.central.immediateSend(data, to: target, now: now, control: &control)
    }

    @discardableResult
    public mutating func immediateSendAll(_ data: Span<UInt8>, now: UInt64, control: inout Control) -> Int {
        core.central.immediateSendAll(data, now: now, control: &control)
    }

    // MARK: LEApplication

    public mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout Control) {
        controllerReady = true
        core.now = now
        peripheral.stackDidBecomeReady(info, now: now, control: &control, delegate: &core)
        startOnceAddressSettled(now: now, control: &control)
    }

    public mutating func stackControllerDidFail(_ failure: ControllerFailure, now: UInt64, control: inout Control) {
        controllerReady = false
        peripheral.stackControllerDidFail()
        core.central.controllerDidFail()
        if core.central.isOn {
            core.central.isOn = false
            delegate.sensor(.ble, didUpdateState: .unavailable)
        }
    }

    public mutating func stackDidReceive(advertisingReport: borrowing AdvertisingReport, now: UInt64, control: inout Control) {
        core.now = now
        let read = core.central.didReceive(advertisingReport: advertisingReport, now: now, control: &control,
                                           delegate: &core.delegate)
        startRead(read, now: now, control: &control)
    }

    /// Sends the first request of a read the central opened over a peer's link, if any.
    mutating func startRead(_ read: (handle: UInt16, step: HeraldGATTStep)?, now: UInt64, control: inout Control) {
        guard let read, let slot = core.central.linkIndex(handle: read.handle) else { return }
        var request = LinkBuffers.PDU()
        perform(read.step, slot: slot, handle: read.handle, now: now, buffer: &request, control: &control)
    }

    public mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout Control) {
        // Every link goes to the peripheral (its advertiser counts them all; it keeps each link's
        // state by handle); central links we made also get a GATT client.
        core.now = now
        peripheral.stackDidConnect(link, now: now, control: &control, delegate: &core)
        guard let step = core.central.didConnect(handle: link.handle, peer: link.peer, isCentral: link.role == .central,
                                                 now: now, control: &control),
              let slot = core.central.linkIndex(handle: link.handle) else { return }
        var request = LinkBuffers.PDU()
        perform(step, slot: slot, handle: link.handle, now: now, buffer: &request, control: &control)
    }

    public mutating func stackDidFailToConnect(to peer: DeviceAddress, status: HCIStatus, now: UInt64, control: inout Control) {
        core.now = now
        startRead(core.central.didFailToConnect(to: peer, status: status, now: now, control: &control), now: now,
                  control: &control)
    }

    public mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout Control) {
        core.now = now
        peripheral.stackDidDisconnect(handle: handle, reason: reason, now: now, control: &control, delegate: &core)
        startRead(core.central.didDisconnect(handle: handle, reason: reason, now: now, control: &control), now: now,
                  control: &control)
    }

    public mutating func stackDidUpdateATTMTU(handle: UInt16, mtu: UInt16, now: UInt64, control: inout Control) {
        core.central.linkMTUDidChange(handle: handle, mtu: mtu)
    }

    public mutating func stackDidUpdatePHY(handle: UInt16, _ phy: LinkPHY, now: UInt64, control: inout Control) {
        core.now = now
        peripheral.stackDidUpdatePHY(handle: handle, phy, delegate: &core)
    }

    public mutating func stackDidReceiveATT(handle: UInt16, pdu: Span<UInt8>, now: UInt64, control: inout Control) {
        core.now = now
        guard let slot = core.central.linkIndex(handle: handle) else { return }
        // One PDU buffer for the client's reply and then the next request (the reply is queued first).
        var buffer = LinkBuffers.PDU()
        guard let outcome = core.central.receiveATT(pdu: pdu, link: slot, now: now, reply: &buffer) else { return }
        afterClient(outcome, buffer: &buffer, slot: slot, handle: handle, now: now, control: &control)
    }

    public mutating func stackCommandDidComplete(tag: CommandTag, opcode: HCIOpcode, status: HCIStatus,
                                                 returnParameters: Span<UInt8>, control: inout Control) {
        _ = peripheral.stackCommandDidComplete(tag: tag, opcode: opcode, status: status, returnParameters: returnParameters,
                                               control: &control, delegate: &core)
        startOnceAddressSettled(now: core.now, control: &control)
    }

    /// The central's start: once the application wants it, the controller is ready and the first
    /// resolvable private address is made (`HeraldSensorPeripheral.addressSettled`).
    mutating func startOnceAddressSettled(now: UInt64, control: inout Control) {
        guard wantsOn, controllerReady, !core.central.isOn, peripheral.addressSettled else { return }
        core.central.start(now: now, control: &control)
        delegate.sensor(.ble, didUpdateState: .on)
    }

    public var applicationDeadline: UInt64? {
        var d = core.central.nextDeadline
        if let t = peripheral.deadline { d = min(d ?? .max, t) }
        if let t = core.central.gattDeadline { d = min(d ?? .max, t) }
        return d
    }

    /// `applicationDeadline` read in place, as the stack asks it on every tick: through the getter
    /// the whole sensor (7 KB on the firmware wearable) was copied onto the main loop's stack.
    public mutating func applicationDeadlineInPlace() -> UInt64? {
        var d = core.central.nextDeadline
        if let t = peripheral.deadlineInPlace() { d = min(d ?? .max, t) }
        if let t = core.central.gattDeadline { d = min(d ?? .max, t) }
        return d
    }

    /// Out of line: inlined into the stack's `tick`, the central's and the peripheral's timer paths
    /// made its frame the largest of the firmware's main loop, under the HCI host's timers as well.
    @inline(never)
    public mutating func stackTimerFired(now: UInt64, control: inout Control) {
        core.now = now
        tickClients(now: now, control: &control)
        core.central.tick(now: now, control: &control, delegate: &core.delegate)
        if let t = peripheral.deadlineInPlace(), now >= t {
            core.now = now
            peripheral.stackTimerFired(now: now, control: &control, delegate: &core)
            startOnceAddressSettled(now: now, control: &control)
        }
    }

    // MARK: Driving the GATT client

    /// The GATT clients' transaction timers. Out of line, with its PDU buffer: inlined into the
    /// stack's `tick`, the buffer sat in the frame under every timer path, the firmware's deepest.
    @inline(never)
    mutating func tickClients(now: UInt64, control: inout Control) {
        var buffer = LinkBuffers.PDU()
        for slot in 0..<links {
            guard let handle = core.central.slots[slot]?.handle,
                  let outcome = core.central.tickGATT(link: slot, now: now) else { continue }
            buffer.removeAll()
            afterClient(outcome, buffer: &buffer, slot: slot, handle: handle, now: now, control: &control)
        }
    }

    /// Acts on what the link's client did; `buffer` holds the client's reply, and is then reused for
    /// the next request (one PDU buffer of the link's size on the stack, not two).
    mutating func afterClient(_ outcome: HeraldGATTOutcome, buffer: inout LinkBuffers.PDU, slot: Int, handle: UInt16,
                              now: UInt64, control: inout Control) {
        switch outcome.action {
        case .send: _ = buffer.withSpan { control.sendATT(handle: handle, pdu: $0) }
        case .disconnect:
            // ATT transaction timeout: the bearer is dead (Core 5.4 Vol 3 Part F 3.3.3).
            core.central.linkWillClose(handle: handle)
            control.disconnect(handle: handle)
        case .none: break
        }
        guard outcome.operationEnded,
              let step = core.central.gattProcedureDidEnd(link: slot, now: now, control: &control, delegate: &core.delegate)
        else { return }
        perform(step, slot: slot, handle: handle, now: now, buffer: &buffer, control: &control)
    }

    /// Starts the GATT procedure for `step`; one that cannot start counts as failed and the procedure
    /// moves on (at most a few steps, each of which ends or sends). The request is written into
    /// `request`, whatever it held. Out of line: the four callers (connection, response, timer,
    /// MTU) each had the loop and its failure path inlined (wearable -448 B).
    @inline(never)
    mutating func perform(_ first: HeraldGATTStep, slot: Int, handle: UInt16, now: UInt64, buffer request: inout LinkBuffers.PDU,
                          control: inout Control) {
        var step = first
        while true {
            request.removeAll()
            switch core.central.startGATT(step, link: slot, now: now, into: &request) {
            case .send:
                _ = request.withSpan { control.sendATT(handle: handle, pdu: $0) }
                return
            case .nothing:
                return
            case .refused:
                guard let next = core.central.gattDidComplete(handle: handle, succeeded: false, now: now, control: &control,
                                                              delegate: &core.delegate) else { return }
                step = next
            }
        }
    }

    // MARK: GATTServerDelegate: the Herald service's dynamic values belong to the peripheral
    //
    // These calls carry no time: events from them are stamped with the time of the latest stack
    // callback (`core.now`), which adverts keep within a scan interval or so while scanning.

    public mutating func read<S: ByteSink>(id: UInt16, link: UInt16, offset: Int, into sink: inout S) -> ATTErrorCode? {
        guard peripheral.owns(id: id) else { return .readNotPermitted }
        return peripheral.read(id: id, link: link, offset: offset, into: &sink, delegate: &core)
    }

    public mutating func write(id: UInt16, link: UInt16, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
        guard peripheral.owns(id: id) else { return .writeNotPermitted }
        return peripheral.write(id: id, link: link, offset: offset, value: value, delegate: &core)
    }
}

extension HeraldSensor where Peripheral == NoSensorPeripheral {
    /// A sensor without the peripheral role: it scans, reads and shares, but serves nothing.
    public init(supplier: Supplier, delegate: Delegate, configuration: HeraldSensorConfiguration = HeraldSensorConfiguration()) {
        self.init(supplier: supplier, delegate: delegate, peripheral: NoSensorPeripheral(), configuration: configuration)
    }
}

/// The sensor's shared state: what components report into.
public struct SensorCore<Supplier: PayloadDataSupplier, Delegate: SensorDelegate, let devices: Int, let links: Int> {
    public var supplier: Supplier
    public var delegate: Delegate
    public var central: HeraldCentral<devices, links>
    /// The time of the stack callback in progress (component events do not carry it).
    public internal(set) var now: UInt64 = 0
}

/// The Herald API's name for what an application holds and starts (`HeraldSensor` here).
public typealias SensorArray<Supplier: PayloadDataSupplier, Delegate: SensorDelegate, let devices: Int, let links: Int,
                             Peripheral: HeraldSensorPeripheral> = HeraldSensor<Supplier, Delegate, devices, links, Peripheral>
