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
    host.start(now: now, output: &out)
    let span = Span(_unsafeStart: bytes, count: count)
    host.receive(span, now: now, delegate: &delegate, output: &out)
    host.tick(now: now &+ 1_000, delegate: &delegate, output: &out)
    var summary = AdvertisingDataBuilder<31>()
    _ = try? summary.addFlags(0x06)
    return Int32(delegate.reports + out.count + (delegate.ready ? 1 : 0) + summary.build().count)
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

/// The wearable as firmware builds it: Simple payload source, a whole BluetoothStack with the Herald
/// peripheral application (GATT service, signal reassembly, RPA rotation), fed `bytes` at `now`
/// and ticked through a period boundary.
@_cdecl("herald_probe_peripheral")
public func probePeripheral(_ secretKey: UnsafePointer<UInt8>, _ bytes: UnsafePointer<UInt8>, _ count: Int,
                            _ now: UInt64, _ unixMillis: Int64) -> Int32 {
    typealias App = HeraldPeripheralApplication<SimplePayloadSource, ProbePeripheralEvents, 2, 32, 128>
    let header = PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 0)
    let name: StaticString = "herald"
    guard let source = try? SimplePayloadSource(secretKey: Span(_unsafeStart: secretKey, count: 2048), header: header),
          var peripheral = try? HeraldPeripheral<SimplePayloadSource, 2, 32, 128>(
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
