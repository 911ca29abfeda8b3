import Testing
import BluetoothHost
@testable import HeraldRuntime

/// A port that never delivers anything: the test feeds the stack itself.
private final class QuietTransport: HCITransport {
    var name: String { "test:quiet" }
    func read(into buffer: UnsafeMutableRawBufferPointer, timeout: Duration) throws(TransportError) -> Int { 0 }
    func write(_ bytes: UnsafeRawBufferPointer) throws(TransportError) {}
    func close() {}
}

private struct Discard: H4Output {
    mutating func send(h4 packet: Span<UInt8>) {}
}

private struct Observer: LEApplication {}

/// `--stats` counts input the host dropped by kind and names the last few drops.
@Suite struct InputDropStatisticsTests {
    @Test func statsCountAndNameEachDrop() throws {
        let db = try GATTDatabase<24, 128, 1>(deviceName: Array("x".utf8).span)
        let stack = BluetoothStack<Observer, 1, 24, 128>(configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]),
                                                       database: db, app: Observer())
        let session = StackSession(transport: QuietTransport(), stack: stack)
        var out = Discard()
        // One legacy report with the reserved Event_Type 7, then an LE Connection Update Complete cut short.
        let report: [UInt8] = [0x04, 0x3E, 0x0C, 0x02, 0x01, 0x07, 0x01, 0xA0, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5, 0x00, 0xC4]
        let update: [UInt8] = [0x04, 0x3E, 0x04, 0x03, 0x00, 0x40, 0x00]
        session.stack.receive(report.span, now: 0, output: &out)
        session.stack.receive(update.span, now: 0, output: &out)
        let stats = Dictionary(uniqueKeysWithValues: session.statistics)
        #expect(stats["droppedAdvertisingReports"] == 1 && stats["droppedLinkEvents"] == 1 && stats["malformedEvents"] == 2)
        #expect(stats["droppedCommandCompletes"] == 0)
        let json = session.statisticsJSON()
        #expect(json.contains(#""lastDrops": ["event 0x3E subevent 0x02 (advertising report): Event_Type 7 is not a valid value", "#
                              + #""event 0x3E subevent 0x03 (link event): 9 octets needed, 3 present"]"#), "\(json)")
    }
}
