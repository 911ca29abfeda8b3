import Testing
@testable import BluetoothHost

/// A server whose links buffer ATT PDUs of up to 65 octets (`LEApplication.LinkBuffers`), as the
/// firmware beacon's do; it serves one 200-octet dynamic value.
struct SmallLinkBuffersApp: LEApplication {
    typealias LinkBuffers = LinkPDUBuffers<65>
    var writes: [[UInt8]] = []
    mutating func read<S: ByteSink>(id: UInt16, link: UInt16, offset: Int, into sink: inout S) -> ATTErrorCode? {
        StackHarness.readServedValue(offset: offset, into: &sink)
    }
    mutating func write(id: UInt16, link: UInt16, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
        writes.append((0..<value.count).map { value[$0] })
        return nil
    }
}

/// Each link's reassembly buffer, held response and the stack's working PDU are the application's
/// choice: the stack never agrees to an ATT_MTU its buffers cannot hold.
@Suite struct LinkBufferSizingTests {
    typealias Stack = BluetoothStack<SmallLinkBuffersApp, 2, 24, 256>

    static func harness() throws -> (Stack, FakeController, WireLog, UInt16) {
        let started = try StackHarness.startedStack(app: SmallLinkBuffersApp(), properties: .read | .write, aclCount: 4)
        var stack = started.0, wire = started.2
        wire.packets.removeAll()
        stack.receive(StackHarness.connectionComplete(handle: 0x0040, role: 0x01).span, now: 0, output: &wire)
        wire.packets.removeAll { $0.first == 0x01 }
        return (stack, started.1, wire, started.3)
    }

    static func sentATT(_ wire: inout WireLog) -> [[UInt8]] {
        let packets = wire.packets.filter { $0.first == 0x02 }
        wire.packets.removeAll()
        return StackHarness.reassemble(packets).filter { $0.channel == 4 }.map(\.payload)
    }

    @Test func theMTUOfferedAndTheLongestResponseAreTheBuffers() throws {
        var (stack, _, wire, value) = try Self.harness()
        // Exchange MTU: the client offers 247, the server's Rx MTU is its buffers' 65 (0x41).
        stack.receive(StackHarness.acl(handle: 0x0040, channel: 4, [0x02, 0xF7, 0x00]).span, now: 0, output: &wire)
        #expect(Self.sentATT(&wire) == [[0x03, 0x41, 0x00]])
        #expect(stack.le.mtu(handle: 0x0040) == 65)
        // A Read of the 200-octet value answers ATT_MTU - 1 = 64 octets of it (Core 5.4 Vol 3 Part F 3.4.4.4).
        stack.receive(StackHarness.numberOfCompleted(handle: 0x0040, 1).span, now: 0, output: &wire)
        stack.receive(StackHarness.acl(handle: 0x0040, channel: 4, [0x0A, UInt8(value), 0x00]).span, now: 0, output: &wire)
        #expect(Self.sentATT(&wire) == [[0x0B] + Array(0..<64)])
    }

    @Test func aPDUBeyondTheBuffersIsDroppedAndTheLinkGoesOn() throws {
        var (stack, _, wire, value) = try Self.harness()
        stack.receive(StackHarness.acl(handle: 0x0040, channel: 4, [0x02, 0xF7, 0x00]).span, now: 0, output: &wire)
        #expect(Self.sentATT(&wire) == [[0x03, 0x41, 0x00]])
        // 66 octets of Write Request: more than the 65 the link reassembles.
        let long: [UInt8] = [0x12, UInt8(value), 0x00] + Array(repeating: 0xAB, count: 63)
        stack.receive(StackHarness.acl(handle: 0x0040, channel: 4, long).span, now: 0, output: &wire)
        #expect(Self.sentATT(&wire).isEmpty)
        #expect(stack.app.writes.isEmpty)
        #expect(stack.le.connections.count == 1)
        // 65 octets is the most there is room for, and is written.
        let longest: [UInt8] = [0x12, UInt8(value), 0x00] + Array(repeating: 0xCD, count: 62)
        stack.receive(StackHarness.acl(handle: 0x0040, channel: 4, longest).span, now: 0, output: &wire)
        #expect(Self.sentATT(&wire) == [[0x13]])
        #expect(stack.app.writes == [Array(repeating: 0xCD, count: 62)])
    }

    @Test func eachLinkCarriesItsBuffersOnly() {
        let standard = MemoryLayout<LinkTable<1, ACLReassembler<247>, LinkState<ATTNoPrepareQueue, FixedBytes<247>>>>.size
        let small = MemoryLayout<LinkTable<1, ACLReassembler<65>, LinkState<ATTNoPrepareQueue, FixedBytes<65>>>>.size
        #expect(standard - small >= 2 * (247 - 65) - 8)  // less alignment padding
    }
}
