import Testing
@testable import BluetoothHost

/// A stack whose H4 framer keeps less than a maximal packet (`BluetoothStackOf`'s `framerOctets`, the
/// venue beacon's 80): bring-up's largest answer still fits, and a larger packet is discarded and
/// counted without losing the packets around it.
@Suite struct SmallFramerTests {
    typealias Stack = BluetoothStackOf<RecordingApp, 1, 24, 256, 72>

    func started() throws -> (Stack, FakeController, WireLog) {
        let (db, _): (GATTDatabase<24, 256, 1>, UInt16) = try StackHarness.batteryDatabase(properties: .read)
        var stack = Stack(configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]), database: db, app: RecordingApp())
        let (controller, wire) = StackHarness.bringUp(&stack)
        return (stack, controller, wire)
    }

    @Test func theSmallestFramerHoldsBringUpsLargestAnswer() throws {
        #expect(H4Framer<72>.smallestCapacity == 71)
        let (stack, _, _) = try started()
        #expect(stack.hci.isReady && stack.app.ready)
        #expect(stack.framer.counters.oversizePackets == 0)
    }

    @Test func aPacketLargerThanTheFramerIsCountedAndTheNextOneHandled() throws {
        var (stack, _, wire) = try started()
        // A vendor event of 100 parameter octets, split over reads as a UART delivers it, then a link.
        let vendor: [UInt8] = [0x04, 0xFF, 100] + [UInt8](repeating: 0xAB, count: 100)
        let link = StackHarness.connectionComplete(handle: 0x40, role: 0x01)
        let bytes = vendor + link
        var i = 0
        while i < bytes.count {
            let n = min(16, bytes.count - i)
            stack.receive(Array(bytes[i..<(i + n)]).span, now: 10, output: &wire)
            i += n
        }
        #expect(stack.framer.counters.oversizePackets == 1)
        #expect(stack.app.connected.map(\.handle) == [0x40])
    }
}
