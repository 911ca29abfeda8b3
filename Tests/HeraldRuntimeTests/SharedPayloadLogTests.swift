import BluetoothHost
import Foundation
@testable import Herald
@testable import HeraldRuntime
import Testing

/// Shared payloads reach contacts.csv as the reference apps log them: a share row per payload under
/// the sharer, then (integration guide events) a read row and a measure row per payload under its
/// own target.
@Suite struct SharedPayloadLogTests {
    final class Lines { var lines: [String] = [] }

    @Test func sharedPayloadsBecomeShareReadAndMeasureRows() throws {
        let consumer = RecordingConsumer()
        let lines = Lines()
        let hub = WearableEventHub(json: true, consumer: consumer, clock: { Date(timeIntervalSince1970: 1_790_000_000) },
                                   write: { lines.lines.append($0) })
        let delegate = WearableSensorDelegate(hub: hub)
        var central = HeraldCentral<8, 2>()
        struct NoControl: HeraldCentralControl {
            mutating func requestConnection(to peer: DeviceAddress, now: UInt64, timeout: UInt64) -> Bool { false }
            mutating func requestDisconnection(handle: UInt16) {}
            mutating func requestScanning(_ scan: ScanIntent?) {}
        }
        var control = NoControl()
        central.start(now: 0, control: &control)
        let a: [UInt8] = [0x10, 0x03, 0x3A, 0x00, 0x00] + [UInt8](repeating: 0xA1, count: 16)
        let b: [UInt8] = [0x10, 0x03, 0x3A, 0x00, 0x00] + [UInt8](repeating: 0xB2, count: 16)
        // Payload sharing, RSSI -60 (0xFFC4), 42 octets.
        let message: [UInt8] = [0x03, 0xC4, 0xFF, 0x2A, 0x00] + a + b
        let writer = DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0xC0, 0, 0, 0, 0, 1))
        // Written to our signal characteristic, on the path that ships: the Herald peripheral
        // reassembles and decodes it, the sensor's core turns it into the delegate's events.
        var core = SensorCore(supplier: SimplePayloadLayout(), delegate: delegate, central: central)
        core.now = 1_000
        var peripheral = try HeraldPeripheral<FixedPayloadSource<32>, StandardServerOffer, 1, 32, 600>(
            source: FixedPayloadSource<32>(bytes: a.span), advertising: HeraldAdvertisingConfiguration(),
            clock: HeraldClock(unixMillisAtZero: 0))
        var stack = StackControl()
        peripheral.stackDidConnect(ConnectionSummary(handle: 0x40, role: .peripheral, peer: writer,
                                                     timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 72)),
                                   now: 1_000, control: &stack, delegate: &core)
        #expect(peripheral.write(id: peripheral.signalID, link: 0x40, offset: 0, value: message.span, delegate: &core) == nil)
        let rows = consumer.events.flatMap(ContactLog.lines(for:))
        // Columns: time,sensor,id,detect,read,measure,share,visit,detectHerald,delete,data
        let fields = rows.map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let shares = fields.filter { $0[6] == "4" }
        #expect(shares.map { $0[10] } == [payloadShortName(a), payloadShortName(b)])
        let reads = fields.filter { $0[4] == "2" }
        #expect(reads.map { $0[10] } == [payloadShortName(a), payloadShortName(b)])
        #expect(Set(reads.map { $0[2] }).count == 2 && !reads.contains { $0[2] == shares[0][2] })
        let measures = fields.filter { $0[5] == "3" }
        for r in reads { #expect(measures.contains { $0[2] == r[2] && $0[10].hasPrefix("RSSI:-60") }) }
    }
}
