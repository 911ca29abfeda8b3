import Testing
@testable import BluetoothHost

/// Input the host drops is counted by kind and named, with its event code, subevent and reason, in a
/// small ring (`HCIHost.drops`); an advertising report that does not parse costs only itself when the
/// reports after it can still be found (Core 5.4 Vol 4 Part E 7.7.65.2: each report carries its own
/// length).
@Suite struct InputDropTests {
    static func ready() -> BringUpHarness {
        var h = BringUpHarness(FakeController())
        h.run()
        return h
    }

    /// One legacy report: ADV_NONCONN_IND from `last`, no data, RSSI -60.
    static func report(eventType: UInt8 = 0x03, addressType: UInt8 = 0x01, last: UInt8) -> [UInt8] {
        [eventType, addressType, last, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5, 0x00, 0xC4]
    }

    static func advertisingReports(_ reports: [[UInt8]]) -> [UInt8] {
        let p: [UInt8] = [0x02, UInt8(reports.count)] + reports.flatMap { $0 }
        return [0x04, 0x3E, UInt8(p.count)] + p
    }

    /// An unknown Event_Type in the middle report: the reports on either side still arrive, and the
    /// one dropped is counted with its reason.
    @Test func aBadReportCostsOnlyItself() {
        var h = Self.ready()
        let event = Self.advertisingReports([Self.report(last: 0xA0), Self.report(eventType: 0x07, last: 0xA1),
                                             Self.report(last: 0xA2)])
        h.host.receive(event.span, now: h.now, delegate: &h.delegate, output: &h.wire)
        #expect(h.delegate.reports.map { $0.address.bytes[0] } == [0xA0, 0xA2])
        #expect(h.host.drops.count(of: .advertisingReport) == 1 && h.host.drops.total == 1)
        #expect(h.host.drops.recent(0) == HCIDrop(kind: .advertisingReport, eventCode: 0x3E, subevent: 0x02,
                                                   reason: .invalidValue(field: "Event_Type", value: 7)))
    }

    /// A report cut short: those before it arrive; nothing after it can be found.
    @Test func aTruncatedReportEndsTheEvent() {
        var h = Self.ready()
        var event = Self.advertisingReports([Self.report(last: 0xA0), Self.report(last: 0xA1)])
        event.removeLast()
        event[2] -= 1
        h.host.receive(event.span, now: h.now, delegate: &h.delegate, output: &h.wire)
        #expect(h.delegate.reports.map { $0.address.bytes[0] } == [0xA0])
        #expect(h.host.drops.count(of: .advertisingReport) == 1)
        #expect(h.host.drops.recent(0).reason == .truncated(needed: 21, available: 20))
    }

    /// Each kind of event the host cannot read is counted under its own name, with its event code and
    /// subevent; the ring keeps the last four, oldest first.
    @Test func eachKindIsCountedAndTheLastFourKept() {
        var h = Self.ready()
        // What the H4 framer lets through never has a length octet that disagrees, a Command Status
        // of another length than 4 or an LE Meta event without its subevent: those are given to the
        // packet handler directly, as a framer that missed them would.
        let packets: [[UInt8]] = [
            [0x04, 0x0E, 0x05, 0x01, 0x03, 0x0C],  // length 5, 3 parameters
            [0x04, 0x0E, 0x03, 0x01, 0x03, 0x0C],  // Command Complete of Reset without a status
            [0x04, 0x0F, 0x03, 0x00, 0x01, 0x0D],  // Command Status one octet short
            [0x04, 0x3E, 0x00],  // LE Meta without a subevent
            [0x04, 0x3E, 0x04, 0x03, 0x00, 0x40, 0x00],  // Connection Update Complete cut short
        ]
        for p in packets {
            h.host.handlePacket(type: .event, p.span, now: h.now, delegate: &h.delegate, output: &h.wire)
        }
        let drops = h.host.drops
        #expect(drops.total == 5)
        for kind: HCIDropKind in [.eventPacket, .commandComplete, .commandStatus, .leMetaWithoutSubevent, .linkEvent] {
            #expect(drops.count(of: kind) == 1, "\(kind)")
        }
        #expect(drops.count(of: .advertisingReport) == 0)
        #expect(drops.recentCount == 4)
        #expect((0..<4).map { drops.recent($0).kind } == [.commandComplete, .commandStatus, .leMetaWithoutSubevent, .linkEvent])
        #expect(drops.recent(0) == HCIDrop(kind: .commandComplete, eventCode: 0x0E, subevent: nil,
                                           reason: .truncated(needed: 4, available: 3)))
        #expect(drops.recent(3).eventCode == 0x3E && drops.recent(3).subevent == 0x03)
        #expect(h.delegate.failures.isEmpty)
    }

    /// The stack's own count of malformed events is the host's: one owner.
    @Test func theStackCountsNothingTwice() throws {
        var (stack, _, wire, _) = try StackHarness.startedStack(app: RawEventApp(), properties: .read, aclCount: 4)
        stack.receive([0x04, 0x3E, 0x04, 0x03, 0x00, 0x40, 0x00].span, now: 0, output: &wire)
        #expect(stack.hci.drops.count(of: .linkEvent) == 1 && stack.hci.drops.total == 1)
    }

    /// An application that never reads the drops (`recordsInputDrops` false, as the firmware images)
    /// has nothing counted; the malformed event is still dropped, not delivered.
    @Test func anApplicationThatReadsNoDropsHasNoneCounted() throws {
        var (stack, _, wire, _) = try StackHarness.startedStack(app: UncountedDropsApp(), properties: .read, aclCount: 4)
        stack.receive([0x04, 0x3E, 0x04, 0x03, 0x00, 0x40, 0x00].span, now: 0, output: &wire)
        stack.receive([0x04, 0x0E, 0x02, 0x01, 0x03].span, now: 0, output: &wire)
        #expect(stack.hci.drops.total == 0 && stack.hci.drops.count(of: .linkEvent) == 0)
        #expect(stack.app.events.isEmpty)
        #expect(!LEStack<UncountedDropsApp, 2, 24, 256>.recordsInputDrops && LEStack<RawEventApp, 2, 24, 256>.recordsInputDrops)
    }
}

/// An application that keeps no drops at all (`InputDrops = NoInputDrops`, as the firmware images):
/// nothing is recorded, `recordsInputDrops` follows, and the host's value has no room for them.
@Suite struct NoInputDropsTests {
    @Test func anApplicationThatKeepsNoDropsHasNoRoomForThem() throws {
        var (stack, _, wire, _) = try StackHarness.startedStack(app: NoDropsApp(), properties: .read, aclCount: 4)
        stack.receive([0x04, 0x3E, 0x04, 0x03, 0x00, 0x40, 0x00].span, now: 0, output: &wire)
        #expect(stack.hci.drops.total == 0 && stack.hci.drops.recentCount == 0)
        #expect(!LEStack<NoDropsApp, 2, 24, 256>.recordsInputDrops)
        #expect(MemoryLayout<HCIHostOf<NoInputDrops>>.size + MemoryLayout<HCIInputDrops>.size - 8
                <= MemoryLayout<HCIHost>.size)
    }
}

struct NoDropsApp: LEApplication {
    typealias InputDrops = NoInputDrops
}

struct UncountedDropsApp: LEApplication {
    static var recordsInputDrops: Bool { false }
    var events: [UInt8] = []
    mutating func stackDidReceive(event: borrowing HCIEventPacket, control: inout StackControl) { events.append(event.code) }
}
