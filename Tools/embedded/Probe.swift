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
