import Testing
@testable import BluetoothHost

/// The LE 2M PHY: the commands and event as bytes, bring-up's LE Set Default PHY, and each link's
/// LE Set PHY (one side, one procedure at a time) and PHY Update Complete.
@Suite struct PHYPDUTests {
    static func bytes<C: HCICommand>(_ command: C) -> [UInt8] {
        let packet = HCICommandPacket(command)
        var out: [UInt8] = []
        for i in packet.bytes.span.indices { out.append(packet.bytes.span[i]) }
        return out
    }

    @Test func setDefaultPHYAndSetPHYEncodeAsTheCoreLaysThemOut() {
        // Core 5.4 Vol 4 Part E 7.8.48: All_PHYs, TX_PHYs, RX_PHYs; opcode 0x2031.
        #expect(Self.bytes(HCILESetDefaultPHY()) == [0x01, 0x31, 0x20, 0x03, 0x00, 0x03, 0x03])
        #expect(Self.bytes(HCILESetDefaultPHY(tx: .le2M, rx: .le1M)) == [0x01, 0x31, 0x20, 0x03, 0x00, 0x02, 0x01])
        // 7.8.49: Connection_Handle, All_PHYs, TX_PHYs, RX_PHYs, PHY_Options; opcode 0x2032.
        #expect(Self.bytes(HCILESetPHY(handle: 0x0041)) == [0x01, 0x32, 0x20, 0x07, 0x41, 0x00, 0x00, 0x03, 0x03, 0x00, 0x00])
    }

    @Test func phyUpdateCompleteParsesAndRejectsOtherLengths() throws {
        let ok: [UInt8] = [0x00, 0x41, 0x00, 0x02, 0x01]
        let e = try HCILEPHYUpdateCompleteEvent(parsing: ok.span)
        #expect(e == HCILEPHYUpdateCompleteEvent(status: .success, handle: 0x41, txPHY: .le2M, rxPHY: .le1M))
        #expect(e.txPHY.name.description == "2M" && e.rxPHY.name.description == "1M" && LEPHY.leCoded.name.description == "Coded")
        let short: [UInt8] = [0x00, 0x41, 0x00, 0x02]
        #expect(throws: DecodeError.self) { _ = try HCILEPHYUpdateCompleteEvent(parsing: short.span) }
        let long: [UInt8] = [0x00, 0x41, 0x00, 0x02, 0x02, 0x00]
        #expect(throws: DecodeError.self) { _ = try HCILEPHYUpdateCompleteEvent(parsing: long.span) }
    }
}

extension HCILEPHYUpdateCompleteEvent {
    init(status: HCIStatus, handle: UInt16, txPHY: LEPHY, rxPHY: LEPHY) {
        let raw: [UInt8] = [status.rawValue, UInt8(handle & 0xFF), UInt8(handle >> 8), txPHY.rawValue, rxPHY.rawValue]
        try! self.init(parsing: raw.span)
    }
}

/// Records the PHY updates the stack reports.
struct PHYRecordingApp: LEApplication {
    var updates: [(handle: UInt16, tx: UInt8, rx: UInt8)] = []
    mutating func stackDidUpdatePHY(handle: UInt16, _ phy: LinkPHY, now: UInt64, control: inout StackControl) {
        updates.append((handle, phy.tx.rawValue, phy.rx.rawValue))
    }
}

@Suite struct PHYBringUpTests {
    /// A controller with the LE 2M PHY feature (the fake's LE features include bit 8) that lists LE
    /// Set Default PHY gets it after the data length, and bring-up says links prefer 2M.
    @Test func aControllerWith2MIsToldToPreferIt() throws {
        var c = FakeController()
        c.listsPHYCommands = true
        var h = BringUpHarness(c)
        h.run()
        let info = try #require(h.delegate.ready)
        #expect(info.prefers2MPHY)
        let opcodes = h.controller.seen
        let suggested = try #require(opcodes.firstIndex(of: 0x2024))
        #expect(opcodes[suggested + 1] == 0x2031)
        #expect(h.wire.sent.contains(PHYPDUTests.bytes(HCILESetDefaultPHY())))
    }

    @Test func withoutTheCommandOrTheFeatureNothingIsSent() throws {
        // Not listed: not sent.
        var h = BringUpHarness(FakeController())
        h.run()
        #expect(try #require(h.delegate.ready).prefers2MPHY == false)
        #expect(!h.controller.seen.contains(0x2031))
        // Listed, but the configuration keeps links at 1M.
        var c = FakeController()
        c.listsPHYCommands = true
        var off = BringUpHarness(c)
        off.host.configuration.prefers2MPHY = false
        off.run()
        #expect(try #require(off.delegate.ready).prefers2MPHY == false)
        #expect(!off.controller.seen.contains(0x2031))
    }

    /// A controller that lists the command but refuses it (as Bumble's virtual one may) still comes up.
    @Test func aRefusedSetDefaultPHYIsSurvived() throws {
        var c = FakeController()
        c.listsPHYCommands = true
        c.phyCommandStatus = 0x01
        var h = BringUpHarness(c)
        h.run()
        let info = try #require(h.delegate.ready)
        #expect(info.prefers2MPHY == false)
        #expect(h.delegate.failures.isEmpty)
    }
}

@Suite struct PHYLinkTests {
    typealias Stack = BluetoothStack<PHYRecordingApp, 2, 24, 256>

    static func started(_ configure: (inout FakeController) -> Void) throws -> (Stack, FakeController, WireLog) {
        let db = try GATTDatabase<24, 256, 2>(deviceName: Array("herald".utf8).span)
        var stack = Stack(configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]), database: db, app: PHYRecordingApp())
        var controller = FakeController()
        configure(&controller)
        var wire = WireLog()
        stack.start(now: 0, output: &wire)
        StackHarness.pump(&stack, controller: &controller, wire: &wire)
        return (stack, controller, wire)
    }

    static func phyUpdate(status: UInt8 = 0, handle: UInt16, tx: UInt8, rx: UInt8) -> [UInt8] {
        [0x04, 0x3E, 0x06, 0x0C, status, UInt8(handle & 0xFF), UInt8(handle >> 8), tx, rx]
    }

    static func setPHYHandles(_ wire: WireLog) -> [UInt16] {
        wire.sent.filter { $0.count >= 6 && $0[0] == 0x01 && $0[1] == 0x32 && $0[2] == 0x20 }.map { UInt16($0[4]) | UInt16($0[5]) << 8 }
    }

    /// LE Data Length Change for `handle`, 251 octets both ways (Core 5.4 Vol 4 Part E 7.7.65.7).
    static func dataLengthChange(handle: UInt16) -> [UInt8] {
        [0x04, 0x3E, 0x0B, 0x07, UInt8(handle & 0xFF), UInt8(handle >> 8), 0xFB, 0x00, 0x48, 0x08, 0xFB, 0x00, 0x48, 0x08]
    }

    static func connect(_ stack: inout Stack, _ controller: inout FakeController, _ wire: inout WireLog,
                        handle: UInt16, role: UInt8, now: UInt64 = 0) {
        feed(&stack, &controller, &wire, StackHarness.connectionComplete(handle: handle, role: role), now: now)
    }

    /// One event from the controller, then whatever the stack sends in answer is answered.
    static func feed(_ stack: inout Stack, _ controller: inout FakeController, _ wire: inout WireLog,
                     _ event: [UInt8], now: UInt64) {
        stack.receive(event.span, now: now, output: &wire)
        StackHarness.pump(&stack, controller: &controller, wire: &wire)
    }

    /// The central asks once its own Data Length Update has ended, not beside it (two procedures at
    /// once on a new link went wrong on Zephyr's controller); the update is applied, counted, reported.
    @Test func theCentralAsksAfterItsDataLengthAndTheUpdateIsApplied() throws {
        var (stack, controller, wire) = try Self.started { $0.listsPHYCommands = true }
        #expect(stack.le.asks2MPHY)
        Self.connect(&stack, &controller, &wire, handle: 0x41, role: 0x00)
        #expect(Self.setPHYHandles(wire).isEmpty)
        Self.feed(&stack, &controller, &wire, Self.dataLengthChange(handle: 0x41), now: 10)
        #expect(Self.setPHYHandles(wire) == [0x41])
        #expect(stack.le.phy(handle: 0x41) == .initial)
        stack.receive(Self.phyUpdate(handle: 0x41, tx: 2, rx: 1).span, now: 20, output: &wire)
        #expect(stack.le.phy(handle: 0x41) == LinkPHY(tx: .le2M, rx: .le1M))
        #expect(stack.app.updates.map(\.handle) == [0x41])
        #expect(stack.app.updates.map(\.tx) == [2] && stack.app.updates.map(\.rx) == [1])
        #expect(stack.le.counters.phyUpdates == 1 && stack.le.counters.lastTxPHY == .le2M && stack.le.counters.lastRxPHY == .le1M)
        // A second Data Length Change asks nothing more.
        Self.feed(&stack, &controller, &wire, Self.dataLengthChange(handle: 0x41), now: 30)
        #expect(Self.setPHYHandles(wire) == [0x41])
    }

    /// Without a Data Length Change (nothing changed, or the controller has no such procedure) the
    /// central asks after `phyRetryDelay`.
    @Test func theCentralAsksOnATimerWhenNoDataLengthChangeComes() throws {
        var (stack, controller, wire) = try Self.started { $0.listsPHYCommands = true }
        Self.connect(&stack, &controller, &wire, handle: 0x41, role: 0x00, now: 1_000)
        #expect(stack.le.nextDeadline == 1_000 + 500)
        stack.tick(now: 1_499, output: &wire)
        #expect(Self.setPHYHandles(wire).isEmpty)
        stack.tick(now: 1_500, output: &wire)
        StackHarness.pump(&stack, controller: &controller, wire: &wire)
        #expect(Self.setPHYHandles(wire) == [0x41])
    }

    /// The peripheral leaves the PHY Update to the central for `peripheralPHYDelay` (a Data Length
    /// Change does not hurry it), and asks only if no update came by then.
    @Test func thePeripheralAsksOnlyIfTheCentralDidNot() throws {
        var (stack, controller, wire) = try Self.started { $0.listsPHYCommands = true }
        Self.connect(&stack, &controller, &wire, handle: 0x40, role: 0x01)
        Self.connect(&stack, &controller, &wire, handle: 0x42, role: 0x01)
        stack.receive(Self.dataLengthChange(handle: 0x40).span, now: 10, output: &wire)
        stack.receive(Self.phyUpdate(handle: 0x42, tx: 2, rx: 2).span, now: 500, output: &wire)
        stack.tick(now: 1_999, output: &wire)
        StackHarness.pump(&stack, controller: &controller, wire: &wire)
        #expect(Self.setPHYHandles(wire).isEmpty)
        stack.tick(now: 2_000, output: &wire)
        StackHarness.pump(&stack, controller: &controller, wire: &wire)
        #expect(Self.setPHYHandles(wire) == [0x40])
        #expect(stack.le.phy(handle: 0x42) == LinkPHY(tx: .le2M, rx: .le2M))
    }

    /// An application about to start a transfer sends the peripheral's waiting request at once, once.
    @Test func aWaitingRequestCanBeSentAtOnce() throws {
        var (stack, controller, wire) = try Self.started { $0.listsPHYCommands = true }
        Self.connect(&stack, &controller, &wire, handle: 0x40, role: 0x01)
        stack.le.requestPendingPHY(handle: 0x40)
        stack.le.requestPendingPHY(handle: 0x40)
        stack.tick(now: 5_000, output: &wire)
        StackHarness.pump(&stack, controller: &controller, wire: &wire)
        #expect(Self.setPHYHandles(wire) == [0x40])
    }

    /// A link being closed is not asked: the controller has nothing to gain, and Zephyr's refuses a
    /// PHY request on a link whose procedures are ending.
    @Test func aLinkBeingClosedIsNotAsked() throws {
        var (stack, controller, wire) = try Self.started { $0.listsPHYCommands = true }
        Self.connect(&stack, &controller, &wire, handle: 0x41, role: 0x00)
        stack.le.control.disconnect(handle: 0x41)
        stack.receive(Self.dataLengthChange(handle: 0x41).span, now: 10, output: &wire)
        stack.tick(now: 5_000, output: &wire)
        StackHarness.pump(&stack, controller: &controller, wire: &wire)
        #expect(Self.setPHYHandles(wire).isEmpty)
    }

    /// A failed procedure (a collision, or a peer without 2M) leaves the link as it was; an update for
    /// no link, or one too short, changes nothing either.
    @Test func failedStrayAndMalformedUpdatesChangeNoLink() throws {
        var (stack, controller, wire) = try Self.started { $0.listsPHYCommands = true }
        Self.connect(&stack, &controller, &wire, handle: 0x40, role: 0x01)
        stack.receive(Self.phyUpdate(status: 0x23, handle: 0x40, tx: 2, rx: 2).span, now: 0, output: &wire)
        stack.receive(Self.phyUpdate(handle: 0x55, tx: 2, rx: 2).span, now: 0, output: &wire)
        let short: [UInt8] = [0x04, 0x3E, 0x05, 0x0C, 0x00, 0x40, 0x00, 0x02]
        stack.receive(short.span, now: 0, output: &wire)
        #expect(stack.le.phy(handle: 0x40) == .initial)
        #expect(stack.app.updates.isEmpty)
        #expect(stack.le.counters.failedPHYUpdates == 1 && stack.le.counters.phyUpdates == 0)
        #expect(stack.hci.drops.count(of: .linkEvent) == 1)
    }

    /// 0x23 LL Procedure Collision: the peer's own PHY Update won and sets the PHYs; asking again
    /// while it is open is what Zephyr's controller answers Command Disallowed, so it is not retried.
    @Test func aPHYCollisionIsNotRetried() throws {
        var (stack, controller, wire) = try Self.started { $0.listsPHYCommands = true }
        Self.connect(&stack, &controller, &wire, handle: 0x41, role: 0x00)
        Self.feed(&stack, &controller, &wire, Self.dataLengthChange(handle: 0x41), now: 10)
        stack.receive(Self.phyUpdate(status: 0x23, handle: 0x41, tx: 1, rx: 1).span, now: 20, output: &wire)
        stack.receive(Self.dataLengthChange(handle: 0x41).span, now: 30, output: &wire)
        stack.tick(now: 10_000, output: &wire)
        StackHarness.pump(&stack, controller: &controller, wire: &wire)
        #expect(Self.setPHYHandles(wire) == [0x41])
    }

    /// A procedure that lost a collision with another kind (0x2A, seen on Zephyr 2.5 against the
    /// central's connection update) is asked again once the link's other procedure completes, at
    /// most twice; a refusal of another kind is not.
    @Test func aCollisionIsRetriedAfterTheOtherProcedureTwiceAtMost() throws {
        var (stack, controller, wire) = try Self.started { $0.listsPHYCommands = true }
        Self.connect(&stack, &controller, &wire, handle: 0x40, role: 0x00)
        Self.feed(&stack, &controller, &wire, Self.dataLengthChange(handle: 0x40), now: 0)
        // LE Connection Update Complete, success, handle 0x0040, 7.5 ms.
        let update: [UInt8] = [0x04, 0x3E, 0x0A, 0x03, 0x00, 0x40, 0x00, 0x06, 0x00, 0x00, 0x00, 0x90, 0x01]
        for _ in 0..<3 {
            Self.feed(&stack, &controller, &wire, Self.phyUpdate(status: 0x2A, handle: 0x40, tx: 1, rx: 1), now: 0)
            #expect(Self.setPHYHandles(wire).count <= 3)
            Self.feed(&stack, &controller, &wire, update, now: 0)
        }
        #expect(Self.setPHYHandles(wire) == [0x40, 0x40, 0x40])
        Self.connect(&stack, &controller, &wire, handle: 0x41, role: 0x00)
        Self.feed(&stack, &controller, &wire, Self.dataLengthChange(handle: 0x41), now: 0)
        stack.receive(Self.phyUpdate(status: 0x1A, handle: 0x41, tx: 1, rx: 1).span, now: 0, output: &wire)
        Self.feed(&stack, &controller, &wire, update, now: 0)
        #expect(Self.setPHYHandles(wire) == [0x40, 0x40, 0x40, 0x41])
    }

    /// A collision with a procedure that completes without an event (one that changed nothing) is
    /// asked again after `phyRetryDelay`.
    @Test func aCollisionWithNoEventAfterIsRetriedOnATimer() throws {
        var (stack, controller, wire) = try Self.started { $0.listsPHYCommands = true }
        Self.connect(&stack, &controller, &wire, handle: 0x40, role: 0x00)
        Self.feed(&stack, &controller, &wire, Self.dataLengthChange(handle: 0x40), now: 0)
        stack.receive(Self.phyUpdate(status: 0x2A, handle: 0x40, tx: 1, rx: 1).span, now: 1_000, output: &wire)
        #expect(stack.le.nextDeadline == 1_000 + 500)
        stack.tick(now: 1_499, output: &wire)
        StackHarness.pump(&stack, controller: &controller, wire: &wire)
        #expect(Self.setPHYHandles(wire) == [0x40])
        stack.tick(now: 1_500, output: &wire)
        StackHarness.pump(&stack, controller: &controller, wire: &wire)
        #expect(Self.setPHYHandles(wire) == [0x40, 0x40])
    }

    /// Without LE Set PHY listed no link is asked; one that refuses it as unknown is asked no more.
    @Test func controllersWithoutSetPHYAreNotAsked() throws {
        var (plain, plainController, plainWire) = try Self.started { _ in }
        Self.connect(&plain, &plainController, &plainWire, handle: 0x40, role: 0x00)
        plain.tick(now: 5_000, output: &plainWire)
        StackHarness.pump(&plain, controller: &plainController, wire: &plainWire)
        #expect(Self.setPHYHandles(plainWire).isEmpty)

        var (stack, controller, wire) = try Self.started { $0.listsPHYCommands = true }
        controller.phyCommandStatus = 0x01
        Self.connect(&stack, &controller, &wire, handle: 0x40, role: 0x00)
        Self.connect(&stack, &controller, &wire, handle: 0x41, role: 0x00)
        Self.feed(&stack, &controller, &wire, Self.dataLengthChange(handle: 0x40), now: 0)
        #expect(!stack.le.asks2MPHY)
        stack.receive(Self.dataLengthChange(handle: 0x41).span, now: 0, output: &wire)
        stack.tick(now: 5_000, output: &wire)
        StackHarness.pump(&stack, controller: &controller, wire: &wire)
        #expect(Self.setPHYHandles(wire) == [0x40])
    }

    /// A controller that never answers LE Set PHY (Bumble's) holds the command queue until the
    /// command timeout once, and is asked no more.
    @Test func anUnansweredSetPHYIsNotSentAgain() throws {
        var (stack, controller, wire) = try Self.started { $0.listsPHYCommands = true }
        controller.ignoresSetPHY = true
        Self.connect(&stack, &controller, &wire, handle: 0x40, role: 0x00)
        Self.feed(&stack, &controller, &wire, Self.dataLengthChange(handle: 0x40), now: 0)
        stack.tick(now: 10_000, output: &wire)
        StackHarness.pump(&stack, controller: &controller, wire: &wire)
        #expect(!stack.le.asks2MPHY)
        Self.connect(&stack, &controller, &wire, handle: 0x41, role: 0x00, now: 10_000)
        stack.receive(Self.dataLengthChange(handle: 0x41).span, now: 10_001, output: &wire)
        stack.tick(now: 20_000, output: &wire)
        StackHarness.pump(&stack, controller: &controller, wire: &wire)
        #expect(Self.setPHYHandles(wire) == [0x40])
    }

    /// Command Disallowed (a PHY procedure already open on the link) fails nothing and changes nothing.
    @Test func commandDisallowedIsANotNow() throws {
        var (stack, controller, wire) = try Self.started { $0.listsPHYCommands = true }
        controller.phyCommandStatus = 0x0C
        Self.connect(&stack, &controller, &wire, handle: 0x40, role: 0x00)
        Self.feed(&stack, &controller, &wire, Self.dataLengthChange(handle: 0x40), now: 0)
        #expect(stack.le.asks2MPHY)
        #expect(stack.le.counters.failedPHYUpdates == 0)
        stack.receive(Self.phyUpdate(handle: 0x40, tx: 2, rx: 2).span, now: 10, output: &wire)
        #expect(stack.le.phy(handle: 0x40) == LinkPHY(tx: .le2M, rx: .le2M))
    }
}

/// An application that neither asks for 2M nor follows PHY updates (`tracksPHYUpdates` false, as
/// the firmware beacon's): LE PHY Update Complete is dropped unread, so its handling is not linked.
struct PHYIgnoringApp: LEApplication {
    static var asksForLE2MPHY: Bool { false }
    static var tracksPHYUpdates: Bool { false }
    var updates = 0
    mutating func stackDidUpdatePHY(handle: UInt16, _ phy: LinkPHY, now: UInt64, control: inout StackControl) { updates += 1 }
}

@Suite struct PHYUntrackedTests {
    @Test func anApplicationThatDoesNotTrackPHYUpdatesHearsNoneAndNoLinkChanges() throws {
        let db = try GATTDatabase<24, 256, 2>(deviceName: Array("herald".utf8).span)
        var stack = BluetoothStack<PHYIgnoringApp, 2, 24, 256>(
            configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]), database: db, app: PHYIgnoringApp())
        var controller = FakeController()
        controller.listsPHYCommands = true
        var wire = WireLog()
        stack.start(now: 0, output: &wire)
        StackHarness.pump(&stack, controller: &controller, wire: &wire)
        stack.receive(StackHarness.connectionComplete(handle: 0x40, role: 0x01).span, now: 0, output: &wire)
        StackHarness.pump(&stack, controller: &controller, wire: &wire)
        stack.receive(PHYLinkTests.phyUpdate(handle: 0x40, tx: 2, rx: 2).span, now: 10, output: &wire)
        #expect(stack.app.updates == 0)
        #expect(stack.le.phy(handle: 0x40) == .initial)
        #expect(stack.le.counters.phyUpdates == 0 && stack.le.counters.failedPHYUpdates == 0)
        // Dropped as of no interest, not as malformed.
        #expect(stack.hci.drops.total == 0)
        #expect(PHYLinkTests.setPHYHandles(wire).isEmpty)
        // The default follows them (PHYRecordingApp, above, is told).
        #expect(PHYRecordingApp.tracksPHYUpdates && LEStack<PHYRecordingApp, 2, 24, 256>.receivesPHYUpdates && !LEStack<PHYIgnoringApp, 2, 24, 256>.receivesPHYUpdates)
    }
}
