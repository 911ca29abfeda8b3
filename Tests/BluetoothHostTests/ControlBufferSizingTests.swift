import Testing
@testable import BluetoothHost

/// A server with a beacon's queues: 192 octets of commands and 160 of ACL data
/// (`LEApplication.ControlBuffers`), for PDUs of up to 65 octets.
struct SmallQueuesApp: LEApplication {
    typealias LinkBuffers = LinkPDUBuffers<65>
    typealias ControlBuffers = StackControlQueues<192, 160>
    mutating func read<S: ByteSink>(id: UInt16, link: UInt16, offset: Int, into sink: inout S) -> ATTErrorCode? {
        StackHarness.readServedValue(offset: offset, into: &sink)
    }
}

/// The application's queues are its own choice, and a response that finds the smaller ACL queue
/// full is held on its link, not lost.
@Suite struct ControlBufferSizingTests {
    typealias Stack = BluetoothStack<SmallQueuesApp, 2, 24, 256>

    @Test func theQueuesAreTheApplicationsSize() {
        #expect(MemoryLayout<StackControl>.size - MemoryLayout<StackControlOf<SmallQueuesApp.ControlBuffers>>.size
                >= (384 - 192) + (1024 - 160))
        #expect(StackControlOf<SmallQueuesApp.ControlBuffers>.commandCapacity == 192)
        #expect(StackControl.commandCapacity == 384)
        #expect(MemoryLayout<Stack>.size < MemoryLayout<BluetoothStack<RecordingApp, 2, 24, 256>>.size)
    }

    @Test func responsesBeyondTheQueueAreHeldAndAllArrive() throws {
        let started = try StackHarness.startedStack(app: SmallQueuesApp(), properties: .read, aclCount: 1)
        var stack = started.0, wire = started.2
        let value = started.3
        #expect(stack.le.control.droppedCommands == 0)
        for handle: UInt16 in [0x0040, 0x0041] {
            stack.receive(StackHarness.connectionComplete(handle: handle, role: 0x01).span, now: 0, output: &wire)
            stack.receive(StackHarness.acl(handle: handle, channel: 4, [0x02, 0xF7, 0x00]).span, now: 0, output: &wire)
        }
        // The controller holds one packet at a time and has one (an MTU response) outstanding:
        // two 64-octet reads fill the queue (2 × 73 of 160 octets), the third must wait on its link.
        stack.receive(StackHarness.acl(handle: 0x0040, channel: 4, [0x0A, UInt8(value), 0x00]).span, now: 0, output: &wire)
        stack.receive(StackHarness.acl(handle: 0x0041, channel: 4, [0x0A, UInt8(value), 0x00]).span, now: 0, output: &wire)
        stack.receive(StackHarness.acl(handle: 0x0040, channel: 4, [0x0A, UInt8(value), 0x00]).span, now: 0, output: &wire)
        #expect(stack.le.counters.heldResponses == 1)
        var responses: [UInt16: Int] = [:]
        for _ in 0..<10 {
            let packets = wire.packets.filter { $0.first == 0x02 }
            wire.packets.removeAll()
            for p in packets {
                let handle = UInt16(p[1]) | UInt16(p[2] & 0x0F) << 8
                if p.count == 5 + 4 + 65, p[9] == 0x0B, Array(p[10...]) == Array(0..<64) { responses[handle, default: 0] += 1 }
                stack.receive(StackHarness.numberOfCompleted(handle: handle, 1).span, now: 0, output: &wire)
            }
        }
        #expect(responses == [0x0040: 2, 0x0041: 1])
        #expect(stack.le.control.aclQueueFullEvents >= 1)
    }
}
