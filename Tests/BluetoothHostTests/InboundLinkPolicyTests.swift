import Testing
@testable import BluetoothHost

/// `RecordingApp` with the Herald sensor's kind of policy: two of four links kept for the central
/// role, silent inbound links dropped after 10 s, silent centrals refused for 60 s.
struct GuardedApp: LEApplication {
    var inner = RecordingApp()
    static var inboundLinks: InboundLinkPolicy {
        InboundLinkPolicy(reservedForCentral: 2, idleBound: 10_000, refuseSilentFor: 60_000)
    }
    mutating func read<S: ByteSink>(id: UInt16, link: UInt16, offset: Int, into sink: inout S) -> ATTErrorCode? {
        StackHarness.readServedValue(offset: offset, into: &sink)
    }
    mutating func write(id: UInt16, link: UInt16, offset: Int, value: Span<UInt8>) -> ATTErrorCode? { nil }
    mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) {
        inner.connected.append(link)
    }
    mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControl) {
        inner.disconnected.append((handle, reason.rawValue))
    }
}

@Suite struct InboundLinkPolicyTests {
    typealias Stack = BluetoothStack<GuardedApp, 4, 24, 256>

    struct Harness {
        var stack: Stack
        var controller = FakeController()
        var wire = WireLog()
        var now: UInt64 = 0

        init() throws {
            let (db, _): (GATTDatabase<24, 256, 4>, UInt16) = try StackHarness.batteryDatabase(properties: .read)
            stack = Stack(configuration: HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6]), database: db, app: GuardedApp())
            controller.aclLength = 27
            controller.aclCount = 4
            stack.start(now: 0, output: &wire)
            StackHarness.pump(&stack, controller: &controller, wire: &wire)
        }

        /// LE Connection Complete as peripheral from peer F0:F1:F2:F3:F4:`last`.
        mutating func inbound(handle: UInt16, last: UInt8) {
            var event = StackHarness.connectionComplete(handle: handle, role: 0x01)
            event[9] = last
            feed(event)
        }
        mutating func feed(_ bytes: [UInt8]) { stack.receive(bytes.span, now: now, output: &wire) }
        mutating func at(_ t: UInt64) {
            now = t
            stack.tick(now: t, output: &wire)
        }
        /// HCI Disconnect commands written since the last call: (handle, reason).
        mutating func disconnects() -> [(UInt16, UInt8)] {
            var out: [(UInt16, UInt8)] = []
            for p in wire.packets where p.count >= 7 && p[0] == 0x01 && p[1] == 0x06 && p[2] == 0x04 {
                out.append((UInt16(p[4]) | UInt16(p[5]) << 8, p[6]))
            }
            StackHarness.pump(&stack, controller: &controller, wire: &wire, now: now)
            return out
        }
        mutating func disconnected(_ handle: UInt16, reason: UInt8) {
            feed([0x04, 0x05, 0x04, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8), reason])
        }
    }

    @Test func linksPastTheQuotaAreRefusedAndTheRoomIsReported() throws {
        var h = try Harness()
        h.inbound(handle: 0x40, last: 0x01)
        #expect(h.stack.le.control.acceptsInboundLinks)
        h.inbound(handle: 0x41, last: 0x02)
        // Two of four links taken by centrals: the other two are the central role's.
        #expect(!h.stack.le.control.acceptsInboundLinks)
        _ = h.disconnects()
        h.inbound(handle: 0x42, last: 0x03)
        #expect(h.disconnects().map(\.0) == [0x42])
        #expect(h.stack.le.counters.refusedInboundLinks == 1)
        h.disconnected(0x42, reason: 0x16)
        h.disconnected(0x40, reason: 0x13)
        #expect(h.stack.le.control.acceptsInboundLinks)
    }

    @Test func aFullTableIsNoRoomAndARefusedCentralIsCountedForTheAdvertiser() throws {
        var h = try Harness()
        h.inbound(handle: 0x40, last: 0x01)
        // Our own central links fill the other three slots: under the inbound quota, but no free slot.
        for (i, handle) in [UInt16(0x50), 0x51, 0x52].enumerated() {
            var event = StackHarness.connectionComplete(handle: handle, role: 0x00)
            event[9] = 0x10 + UInt8(i)
            h.feed(event)
        }
        #expect(!h.stack.le.control.acceptsInboundLinks)
        _ = h.disconnects()
        // A central that connects anyway is refused before the application hears of it; the controller
        // stopped advertising for it, which only the count tells an application advertising on its own.
        h.inbound(handle: 0x41, last: 0x02)
        #expect(h.disconnects().map(\.0) == [0x41])
        #expect(h.stack.le.counters.rejectedConnections == 1)
        #expect(h.stack.le.control.refusedWhileAdvertising == 1)
        #expect(h.stack.app.inner.connected.count == 4)
        h.disconnected(0x41, reason: 0x16)
        #expect(!h.stack.le.control.acceptsInboundLinks)
        h.disconnected(0x50, reason: 0x13)
        #expect(h.stack.le.control.acceptsInboundLinks)
    }

    @Test func aSilentLinkIsDroppedAtTheBoundAndItsCentralRefusedThen() throws {
        var h = try Harness()
        h.inbound(handle: 0x40, last: 0x01)
        h.inbound(handle: 0x41, last: 0x02)
        _ = h.disconnects()
        // 0x41's central reads something at 5 s: it is not idle until 15 s.
        h.at(5_000)
        h.feed(StackHarness.acl(handle: 0x41, channel: 4, [0x02, 0x17, 0x00]))
        #expect(h.stack.le.nextDeadline ?? .max <= 10_000)
        h.at(9_999)
        #expect(h.disconnects().isEmpty)
        h.at(10_000)
        #expect(h.disconnects().map { [$0.0, UInt16($0.1)] } == [[0x40, 0x13]])
        #expect(h.stack.le.counters.idleLinksDropped == 1)
        h.disconnected(0x40, reason: 0x16)
        // The silent central comes back within 60 s: refused at once; the one that spoke is not.
        h.at(20_000)
        #expect(h.disconnects().map(\.0) == [0x41])  // 0x41 fell idle at 15 s
        h.disconnected(0x41, reason: 0x16)
        h.inbound(handle: 0x42, last: 0x01)
        #expect(h.disconnects().map { [$0.0, UInt16($0.1)] } == [[0x42, 0x14]])
        h.disconnected(0x42, reason: 0x16)
        h.inbound(handle: 0x43, last: 0x02)
        #expect(h.disconnects().isEmpty)
        // After 60 s the silent one is welcome again.
        h.at(70_001)
        h.inbound(handle: 0x44, last: 0x01)
        #expect(h.disconnects().map(\.0).contains(0x44) == false)
    }

    /// Our GATT client reads Herald devices over the links they make to us, and their hosts answer.
    /// Answers are not the central speaking: counted as such, a silent central that answered an
    /// Exchange MTU at 5 s was kept past the bound and never refused.
    @Test func answersToOurRequestsNeitherKeepALinkNorSpareItsCentral() throws {
        var h = try Harness()
        h.inbound(handle: 0x40, last: 0x01)
        _ = h.disconnects()
        h.at(5_000)
        h.feed(StackHarness.acl(handle: 0x40, channel: 4, [0x03, 0xF7, 0x00]))  // Exchange MTU Response
        h.feed(StackHarness.acl(handle: 0x40, channel: 4, [0x01, 0x08, 0x01, 0x00, 0x0A]))  // Error Response
        h.at(10_000)
        #expect(h.disconnects().map { [$0.0, UInt16($0.1)] } == [[0x40, 0x13]])
        h.disconnected(0x40, reason: 0x16)
        h.inbound(handle: 0x41, last: 0x01)
        #expect(h.disconnects().map { [$0.0, UInt16($0.1)] } == [[0x41, 0x14]])
    }

    @Test func refusedLinksStillClosingHoldTheirSlotsSoTheCentralsAreKept() throws {
        var h = try Harness()
        h.inbound(handle: 0x40, last: 0x01)
        h.at(10_000)
        #expect(h.disconnects().map(\.0) == [0x40])
        h.disconnected(0x40, reason: 0x16)
        // The silent central comes back through two controllers at once: both refused, and each
        // holds its slot until its Disconnection Complete, so no third central is let in.
        h.inbound(handle: 0x41, last: 0x01)
        #expect(h.disconnects().map(\.0) == [0x41])
        #expect(h.stack.le.control.acceptsInboundLinks)
        h.inbound(handle: 0x42, last: 0x01)
        #expect(h.disconnects().map(\.0) == [0x42])
        #expect(!h.stack.le.control.acceptsInboundLinks)
        // The two slots kept for the central role are free: our own links get them.
        h.feed(StackHarness.connectionComplete(handle: 0x50, role: 0x00))
        var second = StackHarness.connectionComplete(handle: 0x51, role: 0x00)
        second[9] = 0x20
        h.feed(second)
        #expect(h.stack.le.counters.rejectedConnections == 0)
        #expect(h.disconnects().isEmpty)
        h.disconnected(0x41, reason: 0x16)
        h.disconnected(0x50, reason: 0x13)
        #expect(h.stack.le.control.acceptsInboundLinks)
    }

    /// The sequence of a `test_hostile_centrals[zephyr25]` capture in which W never asked to end two
    /// silent links (docs/ci-flakes.md): our own central link on handle 0x0001 ended by our Disconnect,
    /// then silent centrals on handles 0x0000 and 0x0001, each with its Data Length Change. The stack
    /// asks to end each at its bound, handle 0 included, and the earlier Disconnect of 0x0001 is no
    /// reason to skip the new link's.
    @Test func silentLinksOnHandlesZeroAndOneAreDroppedAtTheBoundAfterOurOwnLinkOnOneEnded() throws {
        var h = try Harness()
        h.at(2_834)
        h.feed(StackHarness.connectionComplete(handle: 0x0001, role: 0x00))
        _ = h.disconnects()
        h.stack.perform(now: 3_550, output: &h.wire) { $0.control.disconnect(handle: 0x0001) }
        #expect(h.disconnects().map(\.0) == [0x0001])
        h.at(3_856)
        h.disconnected(0x0001, reason: 0x16)
        func dataLengthChange(_ handle: UInt16) -> [UInt8] {
            [0x04, 0x3E, 0x0B, 0x07, UInt8(handle & 0xFF), UInt8(handle >> 8), 0xFB, 0x00, 0x28, 0x04, 0xFB, 0x00, 0x28, 0x04]
        }
        h.at(13_585)
        h.inbound(handle: 0x0000, last: 0x01)
        h.at(13_982)
        h.feed(dataLengthChange(0x0000))
        h.at(13_984)
        h.inbound(handle: 0x0001, last: 0x02)
        h.at(15_139)
        h.feed(dataLengthChange(0x0001))
        _ = h.disconnects()
        #expect(h.stack.nextDeadline ?? .max <= 23_585)
        h.at(23_584)
        #expect(h.disconnects().isEmpty)
        h.at(23_585)
        #expect(h.disconnects().map(\.0) == [0x0000])
        h.at(23_984)
        #expect(h.disconnects().map(\.0) == [0x0001])
        #expect(h.stack.le.counters.idleLinksDropped == 2)
    }

    /// A benign central whose link fails before its first request (supervision timeout, 0x08; or a
    /// crowd's 0x3E) is not a silent central: only a link we end for idleness puts its central on the
    /// refusal list (issue 39's suspect: a crowd must never trip it).
    @Test func aCentralWhoseLinkFailedBeforeItsFirstRequestIsNotRefused() throws {
        var h = try Harness()
        h.inbound(handle: 0x40, last: 0x01)
        _ = h.disconnects()
        h.at(9_999)
        h.disconnected(0x40, reason: 0x08)
        h.at(10_500)
        h.inbound(handle: 0x41, last: 0x01)
        #expect(h.disconnects().isEmpty)
        #expect(h.stack.le.counters.refusedInboundLinks == 0 && h.stack.le.counters.idleLinksDropped == 0)
        #expect(h.stack.app.inner.connected.map(\.handle) == [0x40, 0x41])
    }

    @Test func centralLinksAreNeverDroppedIdle() throws {
        var h = try Harness()
        h.feed(StackHarness.connectionComplete(handle: 0x40, role: 0x00))
        _ = h.disconnects()
        h.at(100_000)
        #expect(h.disconnects().isEmpty)
        #expect(h.stack.le.counters.idleLinksDropped == 0)
    }

    @Test func theSilentCentralsListKeepsTheLatestWhenFull() {
        var list = SilentCentrals()
        func peer(_ n: UInt8) -> DeviceAddress {
            DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0xF0, 0, 0, 0, 0, n))
        }
        for n in 0..<UInt8(SilentCentrals.capacity + 2) { list.refuse(peer(n), until: 1_000 + UInt64(n)) }
        #expect(list.count(now: 0) == SilentCentrals.capacity)
        #expect(!list.refuses(peer(0), now: 0) && !list.refuses(peer(1), now: 0))
        #expect(list.refuses(peer(UInt8(SilentCentrals.capacity + 1)), now: 0))
        #expect(!list.refuses(peer(9), now: 2_000))
    }
}
