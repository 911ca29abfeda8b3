import Testing
@testable import BluetoothHost

/// Records how the host hands events on: each link event typed, credits, malformed drops, raw events.
struct EventKindLog: HostDelegate {
    var connections: [HCILEConnectionCompleteEvent] = []
    var disconnections: [HCIDisconnectionCompleteEvent] = []
    var updates: [HCILEConnectionUpdateCompleteEvent] = []
    var requests: [HCILERemoteConnectionParameterRequestEvent] = []
    var dataLengths: [HCILEDataLengthChangeEvent] = []
    var phyUpdates: [HCILEPHYUpdateCompleteEvent] = []
    var completedPackets: [[UInt16]] = []
    var raw: [UInt8] = []
    var typed: Int { connections.count + disconnections.count + updates.count + requests.count + dataLengths.count + phyUpdates.count }
    mutating func hostDidReceive(connectionComplete e: HCILEConnectionCompleteEvent) { connections.append(e) }
    mutating func hostDidReceive(disconnectionComplete e: HCIDisconnectionCompleteEvent) { disconnections.append(e) }
    mutating func hostDidReceive(connectionUpdateComplete e: HCILEConnectionUpdateCompleteEvent) { updates.append(e) }
    mutating func hostDidReceive(remoteConnectionParameterRequest e: HCILERemoteConnectionParameterRequestEvent) { requests.append(e) }
    mutating func hostDidReceive(dataLengthChange e: HCILEDataLengthChangeEvent) { dataLengths.append(e) }
    mutating func hostDidReceive(phyUpdateComplete e: HCILEPHYUpdateCompleteEvent) { phyUpdates.append(e) }
    mutating func hostDidReceive(completedPackets e: borrowing HCINumberOfCompletedPacketsEvent) {
        var entries: [UInt16] = []
        for i in 0..<e.count { entries += [e.handle(at: i), e.completedPackets(at: i)] }
        completedPackets.append(entries)
    }
    mutating func hostDidReceive(event: borrowing HCIEventPacket) { raw.append(event.code) }
}

/// A delegate that never initiates connections (`HostDelegate.initiatesConnections` false): it records
/// the roles of the links handed to it.
struct PeripheralOnlyLog: HostDelegate {
    static var initiatesConnections: Bool { false }
    var roles: [HCIRole] = []
    mutating func hostDidReceive(connectionComplete e: HCILEConnectionCompleteEvent) { roles.append(e.role) }
}

/// An application that records the raw events the stack hands it.
struct RawEventApp: LEApplication {
    var events: [(code: UInt8, subevent: UInt8?)] = []
    mutating func stackDidReceive(event: borrowing HCIEventPacket, control: inout StackControl) {
        events.append((event.code, event.code == HCIEventCode.leMeta && event.parameters.count > 0 ? event.parameters[0] : nil))
    }
}

/// Each event is parsed once, in `HCIHost`: link events reach the delegate typed, events the host
/// does not know reach it (and through `LEStack`, the application) raw, and a link event that does
/// not parse is dropped and counted.
@Suite struct LinkEventTests {
    static let disconnection: [UInt8] = [0x04, 0x05, 0x04, 0x00, 0x40, 0x00, 0x13]
    static let completedPackets: [UInt8] = [0x04, 0x13, 0x09, 0x02, 0x40, 0x00, 0x01, 0x00, 0x41, 0x00, 0x03, 0x00]
    static let connectionUpdate: [UInt8] = [0x04, 0x3E, 0x0A, 0x03, 0x00, 0x40, 0x00, 0x18, 0x00, 0x02, 0x00, 0x48, 0x00]
    static let parameterRequest: [UInt8] = [0x04, 0x3E, 0x0B, 0x06, 0x40, 0x00, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x48, 0x00]
    static let dataLengthChange: [UInt8] = [0x04, 0x3E, 0x0B, 0x07, 0x40, 0x00, 0xFB, 0x00, 0x48, 0x08, 0x1B, 0x00, 0x48, 0x01]
    static let phyUpdate: [UInt8] = [0x04, 0x3E, 0x06, 0x0C, 0x00, 0x40, 0x00, 0x02, 0x02]
    /// Events no part of the host acts on: Encryption Change, Data Buffer Overflow, a vendor event
    /// that is no controller assert, LE Advertising Set Terminated, LE Channel Selection Algorithm.
    static let unknown: [[UInt8]] = [
        [0x04, 0x08, 0x04, 0x00, 0x40, 0x00, 0x01],
        [0x04, 0x1A, 0x01, 0x01],
        [0x04, 0xFF, 0x02, 0x10, 0x20],
        [0x04, 0x3E, 0x06, 0x12, 0x00, 0x00, 0x40, 0x00, 0x00],
        [0x04, 0x3E, 0x04, 0x14, 0x40, 0x00, 0x01],
    ]

    static func ready() -> BringUpHarness {
        var h = BringUpHarness(FakeController())
        h.run()
        return h
    }

    /// Only its own LE Create Connection makes a host central: for a delegate that never initiates,
    /// a link is peripheral whatever the controller's event says.
    @Test func aHostThatNeverInitiatesIsPeripheralOnEveryLink() {
        var h = Self.ready()
        var log = PeripheralOnlyLog()
        for role: UInt8 in [0x01, 0x00] {
            h.host.receive(StackHarness.connectionComplete(handle: 0x40, role: role).span, now: h.now, delegate: &log, output: &h.wire)
        }
        #expect(log.roles == [.peripheral, .peripheral])
        var any = EventKindLog()
        h.host.receive(StackHarness.connectionComplete(handle: 0x41, role: 0x00).span, now: h.now, delegate: &any, output: &h.wire)
        #expect(any.connections.map(\.role) == [.central])
    }

    @Test func linkEventsArriveParsedAndNothingElse() throws {
        var h = Self.ready()
        var log = EventKindLog()
        for event in [StackHarness.connectionComplete(handle: 0x40, role: 0x01), Self.disconnection, Self.completedPackets,
                      Self.connectionUpdate, Self.parameterRequest, Self.dataLengthChange, Self.phyUpdate] {
            h.host.receive(event.span, now: h.now, delegate: &log, output: &h.wire)
        }
        #expect(log.raw.isEmpty && h.host.drops.total == 0)
        #expect(log.completedPackets == [[0x40, 1, 0x41, 3]])
        let c = try #require(log.connections.first)
        #expect(log.connections.count == 1 && c.handle == 0x40 && c.role == .peripheral && c.connectionInterval == 0x18)
        #expect(log.disconnections == [HCIDisconnectionCompleteEvent(status: .success, handle: 0x40, reason: HCIStatus(rawValue: 0x13))])
        let u = try #require(log.updates.first)
        #expect(log.updates.count == 1 && u.handle == 0x40 && u.connectionInterval == 0x18 && u.peripheralLatency == 2)
        let r = try #require(log.requests.first)
        #expect(log.requests.count == 1 && r.handle == 0x40 && r.intervalMin == 0x18 && r.intervalMax == 0x28)
        let d = try #require(log.dataLengths.first)
        #expect(log.dataLengths.count == 1 && d.maxTxOctets == 251 && d.maxRxOctets == 27)
        let p = try #require(log.phyUpdates.first)
        #expect(log.phyUpdates.count == 1 && p.handle == 0x40 && p.txPHY == .le2M)
    }

    @Test func eventsTheHostDoesNotKnowArriveRaw() {
        var h = Self.ready()
        var log = EventKindLog()
        for event in Self.unknown { h.host.receive(event.span, now: h.now, delegate: &log, output: &h.wire) }
        #expect(log.raw == [0x08, 0x1A, 0xFF, 0x3E, 0x3E])
        #expect(log.typed == 0 && log.completedPackets.isEmpty && h.host.drops.total == 0)
    }

    /// Each kind of event the host hands on typed, malformed as the H4 framer lets through: the LE
    /// subevents one octet short, Number Of Completed Packets with Num_Handles one more than its
    /// entries (a Disconnection Complete of any other length than 4 never leaves the framer,
    /// `H4Framer.isPlausibleEvent`). Each is dropped and counted once by the stack, none passed to
    /// the application, no link changed.
    @Test func malformedLinkEventsAreCountedOnceEach() throws {
        var (stack, controller, wire, _) = try StackHarness.startedStack(app: RawEventApp(), properties: .read, aclCount: 4)
        stack.receive(StackHarness.connectionComplete(handle: 0x40, role: 0x01).span, now: 0, output: &wire)
        StackHarness.pump(&stack, controller: &controller, wire: &wire)
        let timing = stack.le.timing(handle: 0x40)
        let before = stack.hci.drops.count(of: .linkEvent)
        var malformed = [StackHarness.connectionComplete(handle: 0x41, role: 0x01), Self.connectionUpdate,
                         Self.parameterRequest, Self.dataLengthChange, Self.phyUpdate].map { event in
            var short = Array(event.dropLast())
            short[2] -= 1
            return short
        }
        malformed.append([0x04, 0x13, 0x05, 0x02, 0x40, 0x00, 0x01, 0x00])
        for (n, event) in malformed.enumerated() {
            stack.receive(event.span, now: 0, output: &wire)
            #expect(stack.hci.drops.count(of: .linkEvent) == before + n + 1, "event \(n)")
        }
        #expect(stack.app.events.isEmpty)
        #expect(stack.le.connections.count == 1 && stack.le.timing(handle: 0x40) == timing)
        #expect(stack.le.dataLength(handle: 0x40) == .initial)
    }

    /// What the stack does not act on reaches the application as the raw event; what it acts on
    /// (link events, credits) does not, and neither does a failed Disconnection Complete.
    @Test func theApplicationGetsWhatTheStackDoesNotConsume() throws {
        var (stack, controller, wire, _) = try StackHarness.startedStack(app: RawEventApp(), properties: .read, aclCount: 4)
        stack.receive(StackHarness.connectionComplete(handle: 0x40, role: 0x01).span, now: 0, output: &wire)
        StackHarness.pump(&stack, controller: &controller, wire: &wire)
        for event in [Self.connectionUpdate, Self.dataLengthChange, Self.completedPackets, Self.phyUpdate,
                      [0x04, 0x05, 0x04, 0x0C, 0x40, 0x00, 0x13]] + Self.unknown {
            stack.receive(event.span, now: 0, output: &wire)
        }
        #expect(stack.app.events.map(\.code) == [0x08, 0x1A, 0xFF, 0x3E, 0x3E])
        #expect(stack.app.events.compactMap(\.subevent) == [0x12, 0x14])
        #expect(stack.le.connections.count == 1 && stack.hci.drops.total == 0)
        #expect(stack.le.timing(handle: 0x40) == ConnectionTiming(interval: 0x18, latency: 2, supervisionTimeout: 0x48))
    }
}
