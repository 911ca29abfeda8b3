import Testing
@testable import BluetoothHost

/// Scans while it may and connects when asked, like the Herald sensor: the stack must pause the
/// scan to initiate on a controller that cannot do both (Zephyr's), and resume it however the
/// attempt ends.
struct ScanningCentral: LEApplication {
    var scanAtReady = true
    var connected: [ConnectionSummary] = []
    var failed: [(DeviceAddress, HCIStatus)] = []
    var dataLengths: [(UInt16, LinkDataLength)] = []
    var disconnected: [(UInt16, HCIStatus)] = []
    /// Commands queued when the application heard of the attempt's end (before the stack resumed).
    var queuedAtFailure = 0
    mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        if scanAtReady { control.startScanning(active: true) }
    }
    mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) {
        connected.append(link)
    }
    mutating func stackDidFailToConnect(to peer: DeviceAddress, status: HCIStatus, now: UInt64, control: inout StackControl) {
        failed.append((peer, status))
        queuedAtFailure = control.commands.count
    }
    mutating func stackDidChangeDataLength(handle: UInt16, _ length: LinkDataLength, now: UInt64, control: inout StackControl) {
        dataLengths.append((handle, length))
    }
    mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControl) {
        disconnected.append((handle, reason))
    }
}

/// The stack against the scripted controller under Zephyr's rules.
struct CentralHarness {
    typealias Stack = BluetoothStack<ScanningCentral, 4, 24, 256>
    var stack: Stack
    var controller = FakeController()
    var wire = WireLog()
    var now: UInt64 = 0
    var commands: [UInt16] = []
    static let peer = DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0xF0, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5))

    init(app: ScanningCentral = ScanningCentral()) throws {
        let db = try GATTDatabase<24, 256, 4>(deviceName: Array("herald".utf8).span)
        stack = Stack(configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]), database: db, app: app)
        stack.start(now: now, output: &wire)
        pump()
        commands.removeAll()
    }

    mutating func pump() {
        var rounds = 0
        while !wire.packets.isEmpty, rounds < 200 {
            rounds += 1
            let sent = wire.packets.removeFirst()
            if sent.first == 0x01 {
                let opcode = UInt16(sent[1]) | UInt16(sent[2]) << 8
                commands.append(opcode)
                if opcode == 0x2022 { wireDataLengthHandles.append(UInt16(sent[4]) | UInt16(sent[5]) << 8) }
            }
            let reply = controller.answer(sent)
            if !reply.isEmpty { stack.receive(reply.span, now: now, output: &wire) }
        }
    }

    mutating func connect(timeout: UInt64 = 8_000) -> Bool {
        let peer = Self.peer
        let n = now
        let ok = stack.perform(now: n, output: &wire) { le in le.control.connect(to: peer, now: n, timeout: timeout) }
        pump()
        return ok
    }

    mutating func feed(_ bytes: [UInt8]) {
        // Events as the controller sends them: an LE Connection Complete that fails, or makes us
        // central, ends its initiating.
        var at = 0
        while at + 8 <= bytes.count, bytes[at] == 0x04 {
            if bytes[at + 1] == 0x3E, bytes[at + 3] == 0x01, bytes[at + 4] != 0 || bytes[at + 7] == 0 {
                controller.initiating = false
            }
            at += 3 + Int(bytes[at + 2])
        }
        stack.receive(bytes.span, now: now, output: &wire)
        pump()
    }

    mutating func tick(at t: UInt64) {
        now = t
        stack.tick(now: now, output: &wire)
        pump()
    }

    /// The handles of every LE Set Data Length sent.
    var wireDataLengthHandles: [UInt16] = []

    /// Set Scan Parameters, then Set Scan Enable (on): the scan resumed.
    static let resume: [UInt16] = [0x200B, 0x200C]
}

@Suite("GAP: scanning paused for connection attempts")
struct GAPProcedureTests {
    @Test func connectingPausesTheScanAndALinkResumesIt() throws {
        var h = try CentralHarness()
        #expect(h.controller.scanning)
        do { let ok = h.connect(); #expect(ok) }
        // Scan off first, then LE Create Connection: the controller accepts it.
        #expect(h.commands == [0x200C, 0x200D])
        #expect(!h.controller.scanning)
        #expect(h.controller.refusals.isEmpty)
        h.commands.removeAll()
        h.feed(StackHarness.connectionComplete(handle: 0x0040, role: 0x00))
        #expect(h.stack.app.connected.count == 1)
        #expect(h.stack.le.control.connecting == nil)
        // Data Length Update started (251 octets, 2120 µs), and the scan the application wants resumed.
        #expect(h.commands == [0x2022] + CentralHarness.resume)
        #expect(h.wireDataLengthHandles == [0x0040])
        #expect(h.controller.scanning)
        #expect(h.controller.refusals.isEmpty)
    }

    /// Bumble's virtual controller, after a second link between one pair of devices replaced the
    /// first: our Disconnect of the first gets Command Status and no Disconnection Complete, and the
    /// handle comes back with our next link. The old link ends then, and the new one is served (it
    /// was ignored: the scan it paused never resumed, and the wearable read nobody again).
    @Test func aHandleReusedWithoutItsDisconnectionCompleteEndsTheOldLinkFirst() throws {
        var h = try CentralHarness()
        do { let ok = h.connect(); #expect(ok) }
        h.feed(StackHarness.connectionComplete(handle: 0x0001, role: 0x00))
        let n = h.now
        h.stack.perform(now: n, output: &h.wire) { le in le.control.disconnect(handle: 0x0001) }
        h.pump()
        #expect(h.stack.app.disconnected.isEmpty)
        do { let ok = h.connect(); #expect(ok) }
        h.commands.removeAll()
        h.feed(StackHarness.connectionComplete(handle: 0x0001, role: 0x00))
        #expect(h.stack.app.disconnected.map(\.1) == [.localHostTerminated])
        #expect(h.stack.app.connected.count == 2)
        #expect(h.stack.le.counters.reusedHandles == 1)
        #expect(h.commands.suffix(2) == CentralHarness.resume[...])
        #expect(h.controller.scanning)
    }

    @Test func aRefusedAttemptIsReportedThenTheScanResumes() throws {
        var h = try CentralHarness()
        h.controller.createConnectionStatus = 0x12
        do { let ok = h.connect(); #expect(ok) }
        #expect(h.stack.app.failed.map(\.1) == [.invalidParameters])
        // The application heard of it before the scan resumed (it could have tried another peer).
        #expect(h.stack.app.queuedAtFailure == 0)
        #expect(h.commands == [0x200C, 0x200D] + CentralHarness.resume)
        #expect(h.controller.scanning)
    }

    @Test func aTimedOutAttemptIsCancelledReportedAsTimeoutAndTheScanResumes() throws {
        var h = try CentralHarness()
        do { let ok = h.connect(timeout: 2_000); #expect(ok) }
        h.commands.removeAll()
        h.tick(at: 2_000)
        #expect(h.commands == [0x200E])  // LE Create Connection Cancel
        #expect(h.stack.app.failed.isEmpty)
        // The controller ends the cancelled attempt with 0x02 Unknown Connection Identifier.
        h.feed(StackHarness.connectionComplete(handle: 0, role: 0x00, status: 0x02))
        #expect(h.stack.app.failed.map(\.1) == [.connectionTimeout])
        #expect(h.commands == [0x200E] + CentralHarness.resume)
        #expect(h.controller.scanning)
    }

    @Test func aCancelByTheApplicationIsReportedAsSuchEvenWithoutConnectionComplete() throws {
        var h = try CentralHarness()
        do { let ok = h.connect(); #expect(ok) }
        let n = h.now
        h.stack.perform(now: n, output: &h.wire) { le in le.control.cancelConnecting(now: n) }
        h.pump()
        // No LE Connection Complete from this controller (Bumble's never sends one): the grace ends it.
        h.tick(at: LEStackTiming.cancelGrace)
        #expect(h.stack.app.failed.map(\.1) == [.operationCancelledByHost])
        #expect(h.controller.scanning)
        #expect(h.stack.le.control.connecting == nil)
    }

    @Test func scanningAskedForDuringAnAttemptWaitsForItsEndAndStopWins() throws {
        var h = try CentralHarness(app: ScanningCentral(scanAtReady: false))
        do { let ok = h.connect(); #expect(ok) }
        #expect(h.commands == [0x200D])  // nothing to pause
        h.commands.removeAll()
        h.stack.perform(now: 0, output: &h.wire) { le in le.control.startScanning(active: false, interval: 0x0060) }
        h.pump()
        #expect(h.commands.isEmpty)  // not while initiating
        h.feed(StackHarness.connectionComplete(handle: 0x0041, role: 0x00))
        #expect(h.commands == [0x2022] + CentralHarness.resume)
        // Asking again for the scan in progress sends nothing; stopping it stays stopped.
        h.commands.removeAll()
        h.stack.perform(now: 0, output: &h.wire) { le in le.control.startScanning(active: false, interval: 0x0060) }
        h.stack.perform(now: 0, output: &h.wire) { le in le.control.stopScanning() }
        h.pump()
        #expect(h.commands == [0x200C])
        #expect(!h.controller.scanning)
        do { let ok = h.connect(); #expect(ok) }
        h.feed(StackHarness.connectionComplete(handle: 0x0042, role: 0x00))
        #expect(!h.controller.scanning)
        #expect(h.controller.refusals.isEmpty)
    }

    @Test func thePeerConnectingToUsFirstEndsOurAttemptAsConnectionAlreadyExists() throws {
        var h = try CentralHarness()
        do { let ok = h.connect(); #expect(ok) }
        h.commands.removeAll()
        // The peer we initiate to (F0:F1:…:F5) connects to us: we are peripheral on that link.
        h.feed(StackHarness.connectionComplete(handle: 0x0043, role: 0x01))
        #expect(h.stack.app.connected.map(\.role) == [.peripheral])
        #expect(h.commands == [0x2022, 0x200E])
        h.feed(StackHarness.connectionComplete(handle: 0, role: 0x00, status: 0x02))
        #expect(h.stack.app.failed.map(\.1) == [.connectionAlreadyExists])
        #expect(h.controller.scanning)
    }

    /// Two devices connecting to each other at once (Zephyr's controller, two wearables that
    /// rotated together): the peer's link comes up, the stack cancels our attempt, and our own link
    /// completes before the cancel leaves the queue (it waits behind LE Set Data Length). The cancel
    /// is then obsolete: sent, the controller refuses it with 0x0C, as the capture of that run shows.
    @Test func aCancelOvertakenByOurOwnLinkIsNotSent() throws {
        var h = try CentralHarness()
        do { let ok = h.connect(); #expect(ok) }
        h.commands.removeAll()
        // Both LE Connection Completes in one read: peripheral (the peer's link), then central (ours).
        h.feed(StackHarness.connectionComplete(handle: 0x0043, role: 0x01) + StackHarness.connectionComplete(handle: 0x0044, role: 0x00))
        #expect(h.stack.app.connected.map(\.role) == [.peripheral, .central])
        #expect(!h.commands.contains(0x200E), "an obsolete LE Create Connection Cancel was sent")
        #expect(h.controller.refusals.isEmpty, "\(h.controller.refusals)")
        #expect(h.stack.hci.commands.obsoleteCancels == 1)
        #expect(h.stack.app.failed.isEmpty)
        #expect(h.stack.le.control.connecting == nil)
        #expect(h.controller.scanning)
    }

    /// The other order, from a capture on Zephyr's controller at a period boundary: the central's
    /// LE Create Connection is sent, and the advertiser cancels it (to change address) before its
    /// Command Status arrives. That cancel is not obsolete and must go out once the attempt has begun.
    @Test func aCancelQueuedWhileCreateConnectionAwaitsItsStatusIsSent() throws {
        var flow = HCICommandFlow<256>()
        var wire = WireLog()
        try flow.enqueue(HCILECreateConnection(peer: CentralHarness.peer, ownAddressType: .randomAddress), tag: .connection)
        flow.pump(now: 0, to: &wire)
        try flow.enqueue(HCILECreateConnectionCancel(), tag: .connection)
        flow.pump(now: 0, to: &wire)
        #expect(flow.queuedCount == 1, "kept while LE Create Connection awaits its status")
        // Command Status (success): the controller is initiating (HCIHost sets this), the cancel goes.
        flow.initiating = true
        _ = flow.complete(opcode: HCILECreateConnection.opcode, numPackets: 1)
        flow.pump(now: 1, to: &wire)
        #expect(wire.packets.map { UInt16($0[1]) | UInt16($0[2]) << 8 } == [0x200D, 0x200E])
        #expect(flow.obsoleteCancels == 0)
    }

    @Test func dataLengthChangesAreAppliedToTheLinkAndReported() throws {
        var h = try CentralHarness()
        h.feed(StackHarness.connectionComplete(handle: 0x0040, role: 0x01))
        #expect(h.stack.le.dataLength(handle: 0x0040) == .initial)
        // LE Data Length Change: tx 251/2120, rx 251/2120 (Core 5.4 Vol 4 Part E 7.7.65.7).
        h.feed([0x04, 0x3E, 0x0B, 0x07, 0x40, 0x00, 0xFB, 0x00, 0x48, 0x08, 0xFB, 0x00, 0x48, 0x08])
        let expected = LinkDataLength(maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 251, maxRxTime: 2120)
        #expect(h.stack.le.dataLength(handle: 0x0040) == expected)
        #expect(h.stack.app.dataLengths.map(\.1) == [expected])
        #expect(h.stack.le.counters.dataLengthChanges == 1)
        // For a link we do not have, nothing.
        h.feed([0x04, 0x3E, 0x0B, 0x07, 0x44, 0x00, 0xFB, 0x00, 0x48, 0x08, 0xFB, 0x00, 0x48, 0x08])
        #expect(h.stack.app.dataLengths.count == 1)
    }

    @Test func noDataLengthUpdateWithoutTheFeature() throws {
        var h = try CentralHarness()
        h.stack.le.hostDidBecomeReady(ControllerInfo())  // no LE features known
        h.commands.removeAll()
        h.feed(StackHarness.connectionComplete(handle: 0x0040, role: 0x01))
        h.tick(at: 1_000)
        #expect(!h.commands.contains(0x2022))
    }

    @Test func thePeersConnectionParametersRequestIsAnswered() throws {
        var h = try CentralHarness()
        h.feed(StackHarness.connectionComplete(handle: 0x0040, role: 0x00))
        h.commands.removeAll()
        // LE Remote Connection Parameter Request: 15–30 ms, latency 0, timeout 720 ms: accepted.
        h.feed([0x04, 0x3E, 0x0B, 0x06, 0x40, 0x00, 0x0C, 0x00, 0x18, 0x00, 0x00, 0x00, 0x48, 0x00])
        #expect(h.commands == [0x2020])
        // Timeout 100 ms with a 4 s interval breaks the Core's rule: refused with 0x3B.
        h.commands.removeAll()
        h.feed([0x04, 0x3E, 0x0B, 0x06, 0x40, 0x00, 0x80, 0x0C, 0x80, 0x0C, 0x00, 0x00, 0x0A, 0x00])
        #expect(h.commands == [0x2021])
    }

    @Test func theRequestValidityFollowsTheCore() throws {
        func request(_ min: UInt16, _ max: UInt16, _ latency: UInt16, _ timeout: UInt16) throws -> HCILERemoteConnectionParameterRequestEvent {
            var b: [UInt8] = [0x40, 0x00]
            for v in [min, max, latency, timeout] { b += [UInt8(v & 0xFF), UInt8(v >> 8)] }
            return try HCILERemoteConnectionParameterRequestEvent(parsing: b.span)
        }
        #expect(try request(6, 6, 0, 10).isValid)              // 7.5 ms, 100 ms
        #expect(try !request(5, 6, 0, 100).isValid)            // interval below 7.5 ms
        #expect(try !request(24, 12, 0, 100).isValid)          // min > max
        #expect(try !request(24, 24, 500, 3200).isValid)       // latency above 499
        #expect(try !request(400, 400, 0, 100).isValid)        // 1 s > 500 ms half the timeout
        #expect(try request(400, 400, 0, 101).isValid)
        #expect(throws: DecodeError.self) { try HCILERemoteConnectionParameterRequestEvent(parsing: [0x40].span) }
    }

    @Test func advertisingThatIsOffIsNotDisabledAgain() throws {
        var h = try CentralHarness(app: ScanningCentral(scanAtReady: false))
        h.stack.perform(now: 0, output: &h.wire) { le in le.control.stopAdvertising() }
        h.pump()
        #expect(h.commands.isEmpty)
        var data = FixedBytes<31>()
        data.append(contentsOf: [0x02, 0x01, 0x06].span)
        let intent = AdvertisingIntent(parameters: HCILESetAdvertisingParameters(), data: data)
        h.stack.perform(now: 0, output: &h.wire) { le in le.control.startAdvertising(intent) }
        h.pump()
        #expect(h.commands == [0x2006, 0x2008, 0x2009, 0x200A])
        // A central connects: advertising stops (legacy) and is enabled again, without a disable.
        h.commands.removeAll()
        h.feed(StackHarness.connectionComplete(handle: 0x0040, role: 0x01))
        #expect(h.commands == [0x2022, 0x200A])
        h.commands.removeAll()
        h.stack.perform(now: 0, output: &h.wire) { le in le.control.stopAdvertising() }
        h.pump()
        #expect(h.commands == [0x200A])
        #expect(h.controller.refusals.isEmpty)
    }
}
