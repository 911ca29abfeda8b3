// Compiled by Tools/embedded-check after the core modules: it instantiates the core's generic code
// with concrete types, as firmware would, so the -no-allocations proof covers specialised code paths
// (unused generic code is never emitted, and so never checked, on its own).
import BluetoothHost
import Herald

/// Stands in for a UART driver: keeps the last packet written.
struct ProbeOutput: H4Output {
    var last = FixedBytes<68>()
    var count = 0
    mutating func send(h4 packet: Span<UInt8>) {
        last = FixedBytes<68>(packet)
        count += 1
    }
}

/// Counts what the host reports, as a firmware application would.
struct ProbeDelegate: HostDelegate {
    var ready = false
    var reports = 0
    var lastRSSI: Int8 = 0
    mutating func hostDidBecomeReady(_ info: ControllerInfo) { ready = true }
    mutating func hostDidReceive(advertisingReport: borrowing AdvertisingReport) {
        reports += 1
        lastRSSI = advertisingReport.rssi ?? 0
    }
}

/// Feeds `bytes` to a host at `now`, then runs its timers: the whole core receive path.
@_cdecl("herald_probe_host")
public func probeHost(_ bytes: UnsafePointer<UInt8>, _ count: Int, _ now: UInt64) -> Int32 {
    var host = HCIHost(configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]))
    var out = ProbeOutput()
    var delegate = ProbeDelegate()
    var framer = H4Framer<260>()
    host.start(now: now, output: &out)
    let span = Span(_unsafeStart: bytes, count: count)
    host.receive(span, framer: &framer, now: now, delegate: &delegate, output: &out)
    host.tick(now: now &+ 1_000, delegate: &delegate, output: &out)
    var summary = AdvertisingDataBuilder<31>()
    _ = try? summary.addFlags(0x06)
    return Int32(delegate.reports + out.count + (delegate.ready ? 1 : 0) + summary.build().count)
}

/// A GATT application with one dynamic characteristic, as firmware would have.
struct ProbeApplication: LEApplication {
    var connected = 0
    mutating func read<S: ByteSink>(id: UInt16, link: UInt16, offset: Int, into sink: inout S) -> ATTErrorCode? {
        for i in offset..<32 { sink.append(UInt8(truncatingIfNeeded: i)) }
        return nil
    }
    mutating func write(id: UInt16, link: UInt16, offset: Int, value: Span<UInt8>) -> ATTErrorCode? { nil }
    mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        control.startScanning(active: false)
    }
    mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) {
        connected += 1
    }
}

/// The whole stack (bring-up, links, credits, L2CAP, ATT server, GATT database, notify) specialised
/// for 4 links, as the wearable budget assumes.
@_cdecl("herald_probe_stack")
public func probeStack(_ bytes: UnsafePointer<UInt8>, _ count: Int, _ now: UInt64) -> Int32 {
    let name: StaticString = "probe"
    let nameSpan = Span(_unsafeStart: name.utf8Start, count: name.utf8CodeUnitCount)
    guard var database = try? GATTDatabase<24, 256, 4>(deviceName: nameSpan) else { return -1 }
    var valueHandle: UInt16 = 0
    do throws(GATTDatabaseError) {
        _ = try database.addPrimaryService(BluetoothUUID(uuid16: 0x180F))
        valueHandle = try database.addCharacteristic(
            BluetoothUUID(uuid16: 0x2A19), properties: .read | .notify | .indicate, permissions: .read,
            value: .dynamic(id: 1)).value
    } catch {
        return -2
    }
    var stack = BluetoothStack(configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]),
                               database: database, app: ProbeApplication())
    var out = ProbeOutput()
    stack.start(now: now, output: &out)
    stack.receive(Span(_unsafeStart: bytes, count: count), now: now, output: &out)
    stack.tick(now: now &+ 10, output: &out)
    let sent = stack.perform(now: now, output: &out) { le in
        le.notify(handle: 0x0040, attribute: valueHandle, value: nameSpan)
    }
    return Int32(out.count + stack.app.connected + (sent == .sent ? 1 : 0))
}

/// Collects what a GATT client reports, as a firmware central would.
struct ProbeGATTDelegate: GATTClientDelegate {
    var found = 0
    var octets = 0
    var completions = 0
    var failures = 0
    mutating func gattClientDidDiscover(service: GATTDiscoveredService) { found += 1 }
    mutating func gattClientDidDiscover(characteristic: GATTDiscoveredCharacteristic) { found += 1 }
    mutating func gattClientDidDiscover(descriptor: GATTDiscoveredDescriptor) { found += 1 }
    mutating func gattClientDidRead(handle: UInt16, offset: Int, value: Span<UInt8>) { octets += value.count }
    mutating func gattClientDidReceiveNotification(handle: UInt16, value: Span<UInt8>) { octets += value.count }
    mutating func gattClientDidReceiveIndication(handle: UInt16, value: Span<UInt8>) { octets += value.count }
    mutating func gattClientDidComplete(_ procedure: GATTProcedureKind, error: GATTClientError?) {
        completions += 1
        if error != nil { failures += 1 }
    }
}

/// Starts GATT client procedures and feeds `bytes` to the client as a server's response: the whole
/// client path (every procedure, response, notification and timeout) specialised for one delegate and sink.
@_cdecl("herald_probe_gatt_client")
public func probeGATTClient(_ bytes: UnsafePointer<UInt8>, _ count: Int, _ now: UInt64, _ which: Int32) -> Int32 {
    var client = GATTStandardClient()
    var delegate = ProbeGATTDelegate()
    var out = FixedBytes<247>()
    let span = Span(_unsafeStart: bytes, count: count)
    let value = span.extracting(0..<min(count, 20))
    do throws(GATTClientError) {
        switch which {
        case 0: try client.start(.exchangeMTU, now: now, into: &out)
        case 1: try client.start(.discoverAllPrimaryServices, now: now, into: &out)
        case 2: try client.start(.discoverPrimaryServices(uuid: BluetoothUUID(uuid16: 0x180F)), now: now, into: &out)
        case 3: try client.start(.discoverAllCharacteristics(serviceStart: 1, serviceEnd: 9), now: now, into: &out)
        case 4: try client.start(.discoverAllDescriptors(start: 3, end: 9), now: now, into: &out)
        case 5: try client.start(.read(handle: 3), now: now, into: &out)
        case 6: try client.start(.readLong(handle: 3), now: now, into: &out)
        case 7: try client.start(.write(handle: 3, value: value), now: now, into: &out)
        case 8: try client.start(.writeLong(handle: 3, value: span.extracting(0..<min(count, 512))), now: now, into: &out)
        case 9: try client.start(.writeWithoutResponse(handle: 3, value: value), now: now, into: &out)
        default: try client.start(.setClientConfiguration(descriptorHandle: 4, .notification), now: now, into: &out)
        }
    } catch {
        return -1
    }
    var reply = FixedBytes<247>()
    _ = client.handle(pdu: span, now: now &+ 10, delegate: &delegate, reply: &reply)
    _ = client.tick(now: now &+ 40_000, delegate: &delegate)
    return Int32(delegate.found + delegate.octets + delegate.completions + delegate.failures + out.count + reply.count)
}

/// Counts sensor events, as a firmware application would.
struct ProbeSensorDelegate: SensorDelegate {
    var events = 0
    var octets = 0
    mutating func sensor(_ sensor: SensorType, didDetect target: TargetIdentifier) { events += 1 }
    mutating func sensor(_ sensor: SensorType, didMeasure proximity: Proximity, fromTarget target: TargetIdentifier) {
        events += Int(proximity.value & 1)
    }
    mutating func sensor(_ sensor: SensorType, didRead payload: Span<UInt8>, fromTarget target: TargetIdentifier) {
        octets += payload.count
    }
    mutating func sensor(_ sensor: SensorType, didShare payloads: borrowing SharedPayloads, fromTarget target: TargetIdentifier) {
        for i in 0..<payloads.count { octets += payloads[i].count }
    }
    mutating func sensor(_ sensor: SensorType, didReceive data: Span<UInt8>, fromTarget target: TargetIdentifier) {
        octets += data.count
    }
    mutating func sensor(_ sensor: SensorType, available: Bool, didDeleteOrDetect target: TargetIdentifier) { events += 1 }
}

/// The Herald sensor as firmware would build it: a sensor array (Simple payload supplier, two
/// delegates, the Herald peripheral with its GATT service and rotating address) as the application of
/// a 4-link stack, 64 devices and 2 central links. `bytes` go in as HCI from the controller and as a
/// signal message written to the signal characteristic (the GATT server's write, the path that
/// ships); then an immediate send to all and the timers run (purge, GATT client timeouts, address
/// rotation).
@_cdecl("herald_probe_sensor")
public func probeSensor(_ bytes: UnsafePointer<UInt8>, _ count: Int, _ now: UInt64) -> Int32 {
    typealias Peripheral = HeraldPeripheral<NoPayloadSource, StandardServerOffer, 4, 32, 128>
    typealias App = HeraldSensor<SimplePayloadDataSupplier<InlineSecretKey>, SensorDelegatePair<ProbeSensorDelegate, ProbeSensorDelegate>, 64, 2, Peripheral>
    let span = Span(_unsafeStart: bytes, count: count)
    guard count >= 2048 else { return -1 }
    let key = span.extracting(0..<2048)
    let header = PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 0)
    let name: StaticString = "herald"
    guard let supplier = try? SimplePayloadDataSupplier(secretKey: key, header: header),
          var peripheral = try? Peripheral(source: NoPayloadSource(), advertising: HeraldAdvertisingConfiguration(irk: InlineArray(repeating: 7)),
                                           clock: HeraldClock(unixMillisAtZero: 1_780_000_000_000)),
          var database = try? GATTDatabase<24, 256, 4>(deviceName: Span(_unsafeStart: name.utf8Start, count: name.utf8CodeUnitCount)),
          (try? peripheral.install(into: &database)) != nil
    else { return -2 }
    let app = App(supplier: supplier, delegate: SensorDelegatePair(ProbeSensorDelegate(), ProbeSensorDelegate()), peripheral: peripheral)
    var stack = BluetoothStack(configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]),
                               database: database, app: app)
    var out = ProbeOutput()
    stack.start(now: now, output: &out)
    _ = stack.perform(now: now, output: &out) { le in le.app.start(now: now, control: &le.control) }
    stack.receive(span, now: now, output: &out)
    let sent = stack.perform(now: now &+ 5, output: &out) { le in
        let message = span.extracting(2048..<count)
        _ = le.app.write(id: HeraldGATTProfile.signalValueID, link: 0x0040, offset: 0, value: message)
        var payload = FixedBytes<128>()
        _ = le.app.supplier.writePayload(at: 1_780_000_000 &+ Int64(bitPattern: now / 1_000), to: &payload)
        return le.app.immediateSendAll(payload.span, now: now &+ 5, control: &le.control)
    }
    stack.tick(now: now &+ 70_000, output: &out)
    stack.tick(now: now &+ 400_000, output: &out)
    let d = stack.app.delegate
    return Int32(out.count + sent + d.first.events + d.second.octets + stack.app.central.database.count)
}

/// Firmware's view of the Herald peripheral's events: counters only.
struct ProbePeripheralEvents: HeraldPeripheralDelegate {
    var messages = 0
    var lastRSSI: Int16 = 0
    mutating func heraldPeripheral(didReceivePayload payload: Span<UInt8>, from link: HeraldLink) { messages += 1 }
    mutating func heraldPeripheral(didMeasureRSSI rssi: Int16, from link: HeraldLink) { lastRSSI = rssi }
    mutating func heraldPeripheral(didShare payloads: SharedPayloadIterator, rssi: Int16, from link: HeraldLink) {
        var it = payloads
        while let p = try? it.next() { messages += p.count > 0 ? 1 : 0 }
    }
}

/// A peripheral-only wearable: the Simple payload supplier as its source, a whole BluetoothStack with the Herald
/// peripheral application (GATT service, signal reassembly, RPA rotation), fed `bytes` at `now`
/// and ticked through a period boundary.
@_cdecl("herald_probe_peripheral")
public func probePeripheral(_ secretKey: UnsafePointer<UInt8>, _ bytes: UnsafePointer<UInt8>, _ count: Int,
                            _ now: UInt64, _ unixMillis: Int64) -> Int32 {
    // The key read in place (flash on a microcontroller), as firmware does.
    typealias Source = SimplePayloadDataSupplier<StaticSecretKey>
    typealias App = HeraldPeripheralApplication<Source, ProbePeripheralEvents, 2, 32, 128, StandardServerOffer>
    let header = PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 0)
    let name: StaticString = "herald"
    let source = Source(key: StaticSecretKey(unsafeStart: secretKey), header: header)
    guard var peripheral = try? HeraldPeripheral<Source, StandardServerOffer, 2, 32, 128>(
              source: source, advertising: HeraldAdvertisingConfiguration(irk: InlineArray(repeating: 7)),
              clock: HeraldClock(unixMillisAtZero: unixMillis)),
          var database = try? GATTDatabase<24, 192, 2>(deviceName: Span(_unsafeStart: name.utf8Start, count: name.utf8CodeUnitCount)),
          (try? peripheral.install(into: &database)) != nil
    else { return -1 }
    var stack = BluetoothStack(configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]),
                               database: database, app: App(peripheral: peripheral, delegate: ProbePeripheralEvents()))
    var out = ProbeOutput()
    stack.start(now: now, output: &out)
    stack.receive(Span(_unsafeStart: bytes, count: count), now: now, output: &out)
    stack.tick(now: now &+ 360_000, output: &out)
    let events = stack.app.delegate
    return Int32(truncatingIfNeeded: events.messages + Int(events.lastRSSI) + out.count)
}
