import Testing
@testable import BluetoothHost

/// An application that follows no data length change, never asks for connection parameters and runs
/// no GATT client (as the firmware beacon's `HeraldPeripheralApplication`): what it leaves out is not
/// linked, and the stack behaves as a server that needs none of it.
struct ServerOnlyApp: LEApplication {
    /// A central's LE Set PHY waits for a data length change, so only an application that asks for
    /// no 2M can leave them unread.
    static var asksForLE2MPHY: Bool { false }
    static var tracksDataLengthChanges: Bool { false }
    static var requestsConnectionParameters: Bool { false }
    static var hasGATTClient: Bool { false }
    static var tracksConnectionTiming: Bool { false }
    var lengthChanges = 0
    var clientPDUs = 0
    mutating func stackDidChangeDataLength(handle: UInt16, _ length: LinkDataLength, now: UInt64, control: inout StackControl) {
        lengthChanges += 1
    }
    mutating func stackDidReceiveATT(handle: UInt16, pdu: Span<UInt8>, now: UInt64, control: inout StackControl) {
        clientPDUs += 1
    }
}

struct TracksNoLengthButAsks2M: LEApplication {
    static var tracksDataLengthChanges: Bool { false }
    static var tracksConnectionTiming: Bool { false }
}

/// The same, with the defaults: it hears both.
struct DefaultChoicesApp: LEApplication {
    var lengthChanges = 0
    var clientPDUs = 0
    mutating func stackDidChangeDataLength(handle: UInt16, _ length: LinkDataLength, now: UInt64, control: inout StackControl) {
        lengthChanges += 1
    }
    mutating func stackDidReceiveATT(handle: UInt16, pdu: Span<UInt8>, now: UInt64, control: inout StackControl) {
        clientPDUs += 1
    }
}

@Suite struct ApplicationChoicesTests {
    /// LE Data Length Change for 0x40 (251 octets both ways), then an ATT Read Response on it.
    static func feed<App: LEApplication>(_ stack: inout BluetoothStack<App, 2, 24, 256>, _ wire: inout WireLog) {
        stack.receive(StackHarness.connectionComplete(handle: 0x40, role: 0x01).span, now: 0, output: &wire)
        stack.receive(PHYLinkTests.dataLengthChange(handle: 0x40).span, now: 1, output: &wire)
        stack.receive(StackHarness.acl(handle: 0x40, channel: 0x0004, [0x0B, 0x01, 0x02]).span, now: 2, output: &wire)
    }

    @Test func aServerOnlyApplicationHearsNoDataLengthChangeNorClientPDU() throws {
        var (stack, _, wire, _) = try StackHarness.startedStack(app: ServerOnlyApp(), properties: .read, aclCount: 4)
        Self.feed(&stack, &wire)
        #expect(stack.le.connections.count == 1)
        #expect(stack.app.lengthChanges == 0 && stack.le.counters.dataLengthChanges == 0)
        #expect(stack.le.dataLength(handle: 0x40) == .initial)
        #expect(stack.app.clientPDUs == 0)
        #expect(stack.hci.drops.total == 0)
        #expect(!LEStack<ServerOnlyApp, 2, 24, 256>.receivesDataLengthChanges)
        // Asking for 2M, it would follow them all the same.
        #expect(LEStack<TracksNoLengthButAsks2M, 2, 24, 256>.receivesDataLengthChanges)
    }

    /// LE Connection Update Complete for a link of an application that follows no timing: dropped
    /// unread (not counted as a drop), the link's timing as it came up; by default, the new timing.
    @Test func aServerOnlyApplicationFollowsNoConnectionUpdate() throws {
        var (stack, _, wire, _) = try StackHarness.startedStack(app: ServerOnlyApp(), properties: .read, aclCount: 4)
        stack.receive(StackHarness.connectionComplete(handle: 0x40, role: 0x01).span, now: 0, output: &wire)
        let timing = stack.le.timing(handle: 0x40)
        // Connection_Interval 0x30, latency 2, timeout 0x48: not what the link came up with.
        var update = LinkEventTests.connectionUpdate
        update[7] = 0x30
        stack.receive(update.span, now: 1, output: &wire)
        #expect(stack.le.timing(handle: 0x40) == timing && timing?.interval != 0x30)
        #expect(stack.hci.drops.total == 0)
        #expect(!LEStack<ServerOnlyApp, 2, 24, 256>.receivesConnectionUpdates)
        // Asking for 2M, it would follow them all the same (a held LE Set PHY is retried at their end).
        #expect(LEStack<TracksNoLengthButAsks2M, 2, 24, 256>.receivesConnectionUpdates)

        var (tracking, _, trackingWire, _) = try StackHarness.startedStack(app: DefaultChoicesApp(), properties: .read, aclCount: 4)
        tracking.receive(StackHarness.connectionComplete(handle: 0x40, role: 0x01).span, now: 0, output: &trackingWire)
        tracking.receive(update.span, now: 1, output: &trackingWire)
        #expect(tracking.le.timing(handle: 0x40) == ConnectionTiming(interval: 0x30, latency: 2, supervisionTimeout: 0x48))
    }

    @Test func byDefaultBothAreDelivered() throws {
        var (stack, _, wire, _) = try StackHarness.startedStack(app: DefaultChoicesApp(), properties: .read, aclCount: 4)
        Self.feed(&stack, &wire)
        #expect(stack.app.lengthChanges == 1 && stack.le.counters.dataLengthChanges == 1)
        #expect(stack.le.dataLength(handle: 0x40)?.maxTxOctets == 251)
        #expect(stack.app.clientPDUs == 1)
        #expect(LEStack<DefaultChoicesApp, 2, 24, 256>.receivesDataLengthChanges)
    }
}
