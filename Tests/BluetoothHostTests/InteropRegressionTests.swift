import Testing
@testable import BluetoothHost

// Bugs found by running `herald serve` against Bumble centrals (Tests/Interop/test_gatt_server.py),
// each pinned here without a radio.

/// Advertises from `stackDidBecomeReady`, like `herald serve` does.
struct AdvertisingApp: LEApplication {
    var intent: AdvertisingIntent
    var readyCount = 0
    mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        readyCount += 1
        control.startAdvertising(intent)
    }
}

/// A stack for any application, brought up against the scripted controller, which here also
/// accepts the advertising commands.
struct AppStackHarness<App: LEApplication> {
    typealias Stack = BluetoothStack<App, 4, 24, 256>
    var stack: Stack
    var controller = FakeController()
    var wire = WireLog()
    var commands: [UInt16] = []
    var now: UInt64 = 0

    init(app: App) throws {
        let db = try GATTDatabaseOf<24, 256, 4, App.GATTHandles>(deviceName: Array("herald".utf8).span)
        stack = Stack(configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]), database: db, app: app)
        stack.start(now: now, output: &wire)
        pump()
    }

    mutating func pump() {
        var rounds = 0
        while !wire.packets.isEmpty, rounds < 200 {
            rounds += 1
            let sent = wire.packets.removeFirst()
            guard sent.first == 0x01 else { continue }
            let opcode = UInt16(sent[1]) | UInt16(sent[2]) << 8
            commands.append(opcode)
            let reply = (0x2006...0x200A).contains(opcode)
                ? FakeController.commandComplete(opcode, [0x00]) : controller.answer(sent)
            if !reply.isEmpty { stack.receive(reply.span, now: now, output: &wire) }
        }
    }
}

@Suite struct InteropRegressionTests {
    static let setAdvertisingEnable: UInt16 = 0x200A
    static let setScanResponseData: UInt16 = 0x2009

    /// Advertising started in `stackDidBecomeReady` used to be queued a second time by the stack's
    /// "resume advertising after a restart": ten commands into the eight-slot queue, so the scan
    /// response and the final enable were dropped and the device never advertised.
    @Test func advertisingStartedWhenReadyIsSentOnceAndEnabled() throws {
        var data = FixedBytes<31>()
        data.append(contentsOf: [0x02, 0x01, 0x06].span)
        let app = AdvertisingApp(intent: AdvertisingIntent(parameters: HCILESetAdvertisingParameters(), data: data))
        var h = try AppStackHarness(app: app)
        #expect(h.stack.app.readyCount == 1)
        #expect(h.stack.le.control.droppedCommands == 0)
        let advertising = h.commands.filter { (0x2006...0x200A).contains($0) }
        // No disable first: advertising was off, and Zephyr refuses to disable what is off (0x0C).
        #expect(advertising == [0x2006, 0x2008, 0x2009, 0x200A])
        #expect(h.commands.last == Self.setAdvertisingEnable)

        // After a controller failure and a new bring-up the application advertises again from its
        // callback: still one sequence, ending enabled.
        h.commands.removeAll()
        h.stack.start(now: 1_000, output: &h.wire)
        h.pump()
        #expect(h.stack.app.readyCount == 2)
        #expect(h.stack.le.control.droppedCommands == 0)
        #expect(h.commands.filter { $0 == Self.setScanResponseData }.count == 1)
        #expect(h.commands.last == Self.setAdvertisingEnable)
    }

    /// An application that does not re-advertise on restart still gets its advertising back.
    @Test func advertisingIsResumedAfterRestartWhenTheAppDoesNotAskAgain() throws {
        struct QuietApp: LEApplication {}
        var h = try AppStackHarness(app: QuietApp())
        var data = FixedBytes<31>()
        data.append(contentsOf: [0x02, 0x01, 0x06].span)
        h.stack.perform(now: 0, output: &h.wire) { le in
            le.control.startAdvertising(AdvertisingIntent(parameters: HCILESetAdvertisingParameters(), data: data))
        }
        h.pump()
        h.commands.removeAll()
        h.stack.start(now: 1_000, output: &h.wire)
        h.pump()
        #expect(h.commands.filter { $0 == Self.setScanResponseData }.count == 1)
        #expect(h.commands.last == Self.setAdvertisingEnable)
        #expect(h.stack.le.control.droppedCommands == 0)
    }

    /// Bumble writes a long value at ATT_MTU 23 in parts of 18 octets: 512 octets take 29 Prepare
    /// Writes, more than the standard bearer's 16 entries. They used to fail with Prepare Queue Full
    /// although the 512 queue bytes held them.
    @Test func longWriteOf512OctetsAtMinimumMTUFitsTheStandardQueue() throws {
        var db = try heraldDatabase()
        let handle = try db.addCharacteristic(BluetoothUUID(uuid16: 0xCC03), properties: .write, permissions: .readWrite,
                                              value: .stored([UInt8]().span, maxLength: 512)).value
        var h = ServerHarness(db: db)
        func prepare(_ h: inout ServerHarness, offset: Int, _ part: [UInt8]) -> (ATTServerAction, [UInt8], [UInt8]) {
            let pdu: [UInt8] = [0x16, UInt8(handle & 0xFF), UInt8(handle >> 8), UInt8(offset & 0xFF), UInt8(offset >> 8)] + part
            let (action, response) = h.send(pdu)
            return (action, response, pdu)
        }
        let value = (0..<512).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var offset = 0
        while offset < value.count {
            let part = Array(value[offset..<min(offset + 18, value.count)])
            let (action, response, pdu) = prepare(&h, offset: offset, part)
            // Each part is echoed back (Part F 3.4.6.2), never refused.
            #expect(action == .respond && response == [0x17] + pdu.dropFirst())
            offset += part.count
        }
        #expect(h.bearers[0].queuedWrites == 1)
        #expect(h.ask("18 01") == [0x19])
        #expect(attArray(h.db.value(handle)) == value)

        // One more octet than the queue's 512 bytes is still refused: 28 parts hold 504, then 9 more.
        for i in 0..<28 { _ = prepare(&h, offset: i * 18, [UInt8](repeating: 1, count: 18)) }
        #expect(h.bearers[0].queuedWrites == 1)
        let (_, refused, _) = prepare(&h, offset: 504, [UInt8](repeating: 1, count: 9))
        #expect(refused == [0x01, 0x16, UInt8(handle), 0x00, 0x09])
    }

    /// Bumble's virtual controller answers LE Create Connection Cancel with success but never sends
    /// the LE Connection Complete that should end the attempt: `herald gatt` to an absent address hung
    /// forever. The stack now gives the controller a grace period, then reports the timeout itself
    /// and frees the single connection attempt for the next `connect`.
    @Test func cancelledConnectWithoutConnectionCompleteStillFails() throws {
        var h = try StackHarness()
        let peer = DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0xC1, 0xC2, 0xC3, 0xC4, 0xC5, 0xC6))
        _ = h.stack.perform(now: 0, output: &h.wire) { le in le.control.connect(to: peer, now: 0, timeout: 2_000) }
        h.pump()
        h.now = 2_000
        h.stack.tick(now: h.now, output: &h.wire)
        h.pump()
        #expect(h.controller.seen.contains(0x200E))
        // Nothing more from the controller: within the grace period nothing is reported yet.
        #expect(h.stack.nextDeadline == 2_000 + LEStack<RecordingApp, 4, 24, 256>.cancelGrace)
        h.now = 3_000
        h.stack.tick(now: h.now, output: &h.wire)
        #expect(h.stack.app.failedToConnect.isEmpty)
        h.now = 4_000
        h.stack.tick(now: h.now, output: &h.wire)
        #expect(h.stack.app.failedToConnect.count == 1)
        #expect(h.stack.app.failedToConnect.first?.1 == HCIStatus.connectionTimeout.rawValue)
        #expect(h.stack.le.control.connecting == nil)
        // Only one report, and a new attempt may start.
        h.stack.tick(now: 10_000, output: &h.wire)
        #expect(h.stack.app.failedToConnect.count == 1)
        let again = h.stack.perform(now: 10_000, output: &h.wire) { le in le.control.connect(to: peer, now: 10_000) }
        #expect(again)
    }

    /// `LEStack.indicate` marked the indication outstanding even when the ACL queue refused it: no
    /// confirmation could ever come, every later indication was `.busy`, and after 30 s the transaction
    /// timer disconnected the link. Found while pacing `herald serve`'s indications under load.
    @Test func indicationRefusedByAFullQueueIsNotLeftOutstanding() throws {
        var h = try StackHarness()
        h.feed(StackHarness.connectionComplete(handle: 0x0040, role: 0x01))
        h.pump()  // the controller answers the link's LE Set Data Length
        // The client enables indications of Service Changed (value 8, CCCD 9, in every database).
        h.feed(StackHarness.acl(handle: 0x0040, channel: 4, [0x12, 0x09, 0x00, 0x02, 0x00]))
        #expect(h.sentL2CAP().map(\.payload) == [[0x13]])
        h.feed(StackHarness.numberOfCompleted(handle: 0x0040, 1))
        let range: [UInt8] = [0x01, 0x00, 0xFF, 0xFF]
        let filler: [UInt8] = [0x1B, 0x03, 0x00, 0x00]
        let result = h.stack.perform(now: 0, output: &h.wire) { le -> ATTIndicationResult in
            while le.control.sendATT(handle: 0x0040, pdu: filler.span) {}
            return le.indicate(handle: 0x0040, attribute: 8, value: range.span)
        }
        #expect(result == .queueFull)
        #expect(h.stack.le.connections[handle: 0x0040]?.extra.bearer.hasPendingIndication == false)
        #expect(h.stack.nextDeadline == nil)
        // Once the queue drains the indication goes out and waits for its confirmation.
        for _ in 0..<200 {  // the queue holds dozens of short PDUs
            let sent = h.takeACL()
            if sent.isEmpty { break }
            h.feed(StackHarness.numberOfCompleted(handle: 0x0040, sent.count))
        }
        let again = h.stack.perform(now: 0, output: &h.wire) { le in le.indicate(handle: 0x0040, attribute: 8, value: range.span) }
        #expect(again == .sent)
        #expect(h.sentL2CAP().last?.payload == [0x1D, 0x08, 0x00] + range)
        #expect(h.stack.le.connections[handle: 0x0040]?.extra.bearer.hasPendingIndication == true)
    }

    /// A request that arrived while the link's share of the ACL queue was full (a server busy
    /// notifying) had its response dropped: the client waited 30 s and the link died. The response
    /// is now held and sent as soon as the queue has room, before anything queued later.
    @Test func responseToARequestArrivingOnAFullQueueIsHeldNotDropped() throws {
        var h = try StackHarness()
        h.feed(StackHarness.connectionComplete(handle: 0x0040, role: 0x01))
        let filler: [UInt8] = [0x1B, 0x03, 0x00, 0x00]
        // Fill the link's share of the queue; the first flush hands the controller its 2 buffers, the
        // second fill leaves the share full with no credit to drain it.
        for _ in 0..<2 {
            h.stack.perform(now: 0, output: &h.wire) { le in
                while le.control.sendATT(handle: 0x0040, pdu: filler.span) {}
            }
        }
        // Read Request for the 200-octet dynamic value: the answer has no room yet.
        h.feed(StackHarness.acl(handle: 0x0040, channel: 4, [0x0A, UInt8(h.valueHandle), 0x00]))
        #expect(h.stack.le.counters.heldResponses == 1)
        var payloads: [[UInt8]] = []
        for _ in 0..<40 {
            let sent = h.takeACL()
            if sent.isEmpty { break }
            payloads += StackHarness.reassemble(sent).map(\.payload)
            h.feed(StackHarness.numberOfCompleted(handle: 0x0040, sent.count))
        }
        let reads = payloads.filter { $0.first == 0x0B }
        #expect(reads == [[0x0B] + (0..<22).map { UInt8($0) }])
        #expect(h.stack.le.connections[handle: 0x0040]?.extra.heldResponse.isEmpty == true)
    }
}
