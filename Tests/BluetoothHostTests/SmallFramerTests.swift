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

    /// Reads handled in place or each copied into the framer first (`receive`'s `inPlace`, false on
    /// the firmware's main loop): the same packets handled, the same answers sent, the same counts,
    /// whether a read holds whole packets, splits them, or starts with noise the framer skips.
    @Test func packetsAreHandledAlikeInPlaceOrCopied() throws {
        let link = StackHarness.connectionComplete(handle: 0x40, role: 0x01)
        // Exchange MTU, Read Request of handle 0x0003, then a byte of noise and Number Of Completed Packets.
        let bytes = link + StackHarness.acl(handle: 0x40, channel: 0x0004, [0x02, 0x40, 0x00])
            + StackHarness.acl(handle: 0x40, channel: 0x0004, [0x0A, 0x03, 0x00]) + [0x07]
            + [0x04, 0x13, 0x05, 0x01, 0x40, 0x00, 0x01, 0x00]
        for read in [1, 7, 16, 23, bytes.count] {
            var outcomes: [([[UInt8]], [UInt16], H4FramerCounters)] = []
            for inPlace in [true, false] {
                var (stack, _, wire) = try started()
                wire.sent.removeAll()
                var i = 0
                while i < bytes.count {
                    let n = min(read, bytes.count - i)
                    stack.receive(Array(bytes[i..<(i + n)]).span, now: 10, output: &wire, inPlace: inPlace)
                    i += n
                }
                outcomes.append((wire.sent, stack.app.connected.map(\.handle), stack.framer.counters))
            }
            #expect(outcomes[0].0 == outcomes[1].0 && !outcomes[0].0.isEmpty, "reads of \(read)")
            #expect(outcomes[0].1 == [0x40] && outcomes[1].1 == [0x40], "reads of \(read)")
            #expect(outcomes[0].2 == outcomes[1].2, "reads of \(read)")
        }
    }
}
