import Testing
@testable import BluetoothHost
@testable import Herald

/// The peripheral finds each link's state by its HCI handle, wherever the stack keeps the link.
/// Before, it kept a mirror indexed by the stack's connection-table slot and relied on both tables
/// taking the first free entry in step; a stack that keeps links elsewhere than the peripheral did
/// (here: the slots in the other order) had each access land on the other link's state.
@Suite struct PeripheralLinkNamingTests {
    typealias Captured = SignalMessageTests
    static let payloadMessage = PeripheralSignalTests.payloadMessage

    @Test func readsWritesAndSignalsStayWithTheirLinkWhereverTheStackKeepsIt() throws {
        var h = try PeripheralHarness(source: CountingSource())
        // The peripheral's entries fill in arrival order (0x40, then 0x41); the stack's slots the
        // other way round (0x40 in slot 1, 0x41 in slot 0).
        h.connect(0x0040, stackSlot: 1)
        h.connect(0x0041, stackSlot: 0)
        // Each link reads its own snapshot (CountingSource makes a new value per call).
        let first = Array(h.read(link: 0x0041).dropFirst())
        let second = Array(h.read(link: 0x0040).dropFirst())
        #expect(first == (0..<22).map { UInt8(16 + $0) })
        #expect(second == (0..<22).map { UInt8(32 + $0) })
        #expect(Array(h.readBlob(offset: 22, link: 0x0041).dropFirst()) == (22..<40).map { UInt8(16 + $0) })
        #expect(Array(h.readBlob(offset: 22, link: 0x0040).dropFirst()) == (22..<40).map { UInt8(32 + $0) })
        // A message in two fragments on 0x40, with a whole RSSI message from 0x41 between them.
        #expect(h.writeSignal(Array(Self.payloadMessage[0..<20]), link: 0x0040) == [0x13])
        #expect(h.app.peripheral.pendingSignalBytes(link: 0x0040) == 20)
        #expect(h.app.peripheral.pendingSignalBytes(link: 0x0041) == 0)
        #expect(h.writeSignal(Captured.capturedRSSIWrite, link: 0x0041) == [0x13])
        #expect(h.writeSignal(Array(Self.payloadMessage[20...]), link: 0x0040) == [0x13])
        #expect(h.events == [
            "served 65 \(hexString(first))" + hexString((22..<40).map { UInt8(16 + $0) }),
            "served 64 \(hexString(second))" + hexString((22..<40).map { UInt8(32 + $0) }),
            "rssi 65 -42",
            "payload 64 \(hexString(Captured.payload2))",
        ])
        // 0x41 goes and 0x42 comes: the stack gives it slot 0, the peripheral its entry 1. It starts
        // without a snapshot or a partial message; 0x40 keeps its own.
        h.disconnect(0x0041)
        h.connect(0x0042)
        #expect((0..<2).map { h.links.table.handle(at: $0) } == [0x0042, 0x0040])
        #expect(Array(h.read(link: 0x0042).dropFirst()) == (0..<22).map { UInt8(48 + $0) })
        #expect(Array(h.read(link: 0x0040).dropFirst()) == second)
        #expect(h.app.peripheral.link(handle: 0x0042)?.handle == 0x0042)
        #expect(h.app.peripheral.link(handle: 0x0041) == nil)
        #expect(h.app.delegate.links == ["up 64", "up 65", "down 65 19", "up 66"])
    }

    @Test func anAccessOnALinkThePeripheralDoesNotHoldIsRefused() throws {
        var h = try PeripheralHarness(source: CountingSource())
        h.connect(0x0040)
        // A link the stack holds but never reported here (Unlikely Error, 0x0E), not another's state.
        h.links.insert(0x0077)
        #expect(h.read(link: 0x0077) == [0x01, 0x0A] + h.le(h.handles.payload.value) + [0x0E])
        #expect(h.writeSignal(Captured.capturedRSSIWrite, link: 0x0077) == [0x01, 0x12] + h.le(h.handles.signal.value) + [0x0E])
        #expect(h.events.isEmpty)
        #expect(h.app.peripheral.source.calls == 0)
    }
}
