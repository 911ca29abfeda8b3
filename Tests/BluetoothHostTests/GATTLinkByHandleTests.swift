import Testing
import BluetoothHost

/// The GATT database and the ATT server are asked for a link by its HCI connection handle: the
/// connection table, which numbers the links it holds, turns the handle into the `GATTServerLink`
/// they take (`serverLink(handle:)`), and no caller names a slot. Each test puts two links in
/// entries that do not follow their handles (0x0040 in the first, 0x0001 in the second), so a
/// lookup that took the handle's order, or fell back to the first entry, would land on the other
/// link's values.
@Suite struct GATTLinkByHandleTests {
    static func table() throws -> ConnectionTable<2, 27, NoConnectionExtra> {
        var table = ConnectionTable<2, 27, NoConnectionExtra>()
        for h: UInt16 in [0x0040, 0x0001] {
            try table.insert(handle: h, role: .peripheral, peer: DeviceAddress(type: .randomDevice, address: .zero),
                             timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 400))
        }
        return table
    }

    /// A database with one characteristic that notifies and indicates (its CCCD per link).
    static func database() throws -> (GATTDatabase<24, 256, 2>, GATTCharacteristicHandles) {
        var db = try GATTDatabase<24, 256, 2>(deviceName: Array("herald".utf8).span)
        _ = try db.addPrimaryService(BluetoothUUID(uuid16: 0x180F))
        let c = try db.addCharacteristic(BluetoothUUID(uuid16: 0x2A19), properties: .read | .notify | .indicate,
                                         permissions: .read, value: .dynamic(id: 7))
        return (db, c)
    }

    /// One request on `link`'s bearer; the response bytes.
    static func send(_ pdu: [UInt8], link: GATTServerLink, bearer: inout ATTStandardBearer,
                     database db: inout GATTDatabase<24, 256, 2>) -> [UInt8] {
        var out = ATTTestSink()
        var delegate = GATTNoDelegate()
        _ = ATTServer().handle(pdu: pdu.span, bearer: &bearer, link: link, now: 0, database: &db, delegate: &delegate,
                               response: &out)
        return out.bytes
    }

    @Test func eachLinksValuesAreReadBackByItsHandle() throws {
        let links = try Self.table()
        var (db, c) = try Self.database()
        var bearers = [ATTStandardBearer(), ATTStandardBearer()]
        let cccd = [UInt8(c.clientConfiguration & 0xFF), UInt8(c.clientConfiguration >> 8)]
        let features = [UInt8(db.clientSupportedFeaturesHandle & 0xFF), UInt8(db.clientSupportedFeaturesHandle >> 8)]
        // 0x0001 (second entry) asks for notifications and writes Client Supported Features;
        // 0x0040 (first entry) asks for indications.
        #expect(Self.send([0x12] + cccd + [0x01, 0x00], link: try links.serverLink(handle: 0x0001), bearer: &bearers[1],
                          database: &db) == [0x13])
        #expect(Self.send([0x12] + features + [0x05], link: try links.serverLink(handle: 0x0001), bearer: &bearers[1],
                          database: &db) == [0x13])
        #expect(Self.send([0x12] + cccd + [0x02, 0x00], link: try links.serverLink(handle: 0x0040), bearer: &bearers[0],
                          database: &db) == [0x13])

        let one = try links.serverLink(handle: 0x0001), forty = try links.serverLink(handle: 0x0040)
        #expect(one.handle == 0x0001 && forty.handle == 0x0040)
        #expect(db.clientConfiguration(valueHandle: c.value, link: one) == .notification)
        #expect(db.clientConfiguration(valueHandle: c.value, link: forty) == .indication)
        #expect(attArray(db.value(c.clientConfiguration, link: one)) == [0x01, 0x00])
        #expect(attArray(db.value(c.clientConfiguration, link: forty)) == [0x02, 0x00])
        #expect(db.valueLength(c.clientConfiguration, link: one) == 2)
        #expect(db.clientSupportedFeatures(link: one) == 0x05)
        #expect(db.clientSupportedFeatures(link: forty) == 0)
        // Read over ATT, each link gets its own.
        #expect(Self.send([0x0A] + cccd, link: one, bearer: &bearers[1], database: &db) == [0x0B, 0x01, 0x00])
        #expect(Self.send([0x0A] + cccd, link: forty, bearer: &bearers[0], database: &db) == [0x0B, 0x02, 0x00])
        // A per-link value named without its link is nobody's: empty, not the first entry's.
        let nobodys = db.value(c.clientConfiguration).count
        #expect(nobodys == 0)
        // Resetting one link leaves the other's.
        db.resetLink(one)
        #expect(db.clientConfiguration(valueHandle: c.value, link: one).isEmpty)
        #expect(db.clientSupportedFeatures(link: one) == 0)
        #expect(db.clientConfiguration(valueHandle: c.value, link: forty) == .indication)
    }

    @Test func anUnknownHandleIsRefused() throws {
        var links = try Self.table()
        #expect(throws: ConnectionTableError.unknownHandle(0x0002)) { try links.serverLink(handle: 0x0002) }
        // Not a connection handle at all (the table's mark for a free entry): refused the same way.
        #expect(throws: ConnectionTableError.unknownHandle(0xFFFF)) { try links.serverLink(handle: 0xFFFF) }
        // Gone: its entry is free, and nothing answers for it there.
        _ = links.remove(handle: 0x0040)
        #expect(throws: ConnectionTableError.unknownHandle(0x0040)) { try links.serverLink(handle: 0x0040) }
        #expect(try links.serverLink(handle: 0x0001).handle == 0x0001)
    }

    @Test func anUnknownHandleIsRefusedByTheStack() throws {
        var h = try StackHarness()
        h.feed(StackHarness.connectionComplete(handle: 0x0040, role: 0x01))
        h.pump()
        let v = h.valueHandle
        h.feed(StackHarness.acl(handle: 0x0040, channel: 4, [0x12, UInt8(v + 1), 0x00, 0x01, 0x00]))
        _ = h.takeACL()
        let value: [UInt8] = [0x2A]
        #expect(h.stack.perform(now: 0, output: &h.wire) { le in le.notify(handle: 0x0041, attribute: v, value: value.span) }
                == .unknownLink)
        #expect(h.stack.perform(now: 0, output: &h.wire) { le in le.indicate(handle: 0x0041, attribute: 8, value: value.span) }
                == .unknownLink)
        #expect(h.stack.le.clientConfiguration(valueHandle: v, link: 0x0041) == nil)
        #expect(h.stack.le.clientSupportedFeatures(link: 0x0041) == nil)
        var sink = ATTTestSink()
        #expect(throws: ConnectionTableError.unknownHandle(0x0041)) {
            try h.stack.le.readValue(h.stack.le.database.deviceNameHandle, link: 0x0041, into: &sink)
        }
        #expect(sink.bytes.isEmpty && h.takeACL().isEmpty, "nothing sent for an unknown link")
        // The known link is served.
        #expect(try h.stack.le.readValue(h.stack.le.database.deviceNameHandle, link: 0x0040, into: &sink) == nil)
        #expect(sink.bytes == Array("herald".utf8))
    }

    /// Through a real stack: 0x0040 comes up first and 0x0001 second (entries 0 and 1). 0x0001
    /// enables notifications of the battery level, 0x0040 indications of Service Changed; each is
    /// sent only what it asked for, on its own handle.
    @Test func twoLinksWhoseEntriesDifferFromTheirHandlesAreNotifiedAndConfiguredApart() throws {
        var h = try StackHarness()
        h.feed(StackHarness.connectionComplete(handle: 0x0040, role: 0x01))
        h.pump()
        h.feed(StackHarness.connectionComplete(handle: 0x0001, role: 0x01))
        h.pump()
        #expect(h.stack.app.connected.map(\.handle) == [0x0040, 0x0001])
        let v = h.valueHandle
        h.feed(StackHarness.acl(handle: 0x0001, channel: 4, [0x12, UInt8(v + 1), 0x00, 0x01, 0x00]))
        h.feed(StackHarness.acl(handle: 0x0040, channel: 4, [0x12, 0x09, 0x00, 0x02, 0x00]))
        #expect(h.takeACL().map { aclHandle($0) } == [0x0001, 0x0040])
        h.feed(StackHarness.numberOfCompleted(handle: 0x0001, 1))
        h.feed(StackHarness.numberOfCompleted(handle: 0x0040, 1))
        #expect(h.stack.le.clientConfiguration(valueHandle: v, link: 0x0001) == .notification)
        #expect(h.stack.le.clientConfiguration(valueHandle: v, link: 0x0040)?.isEmpty == true)
        #expect(h.stack.le.clientConfiguration(valueHandle: 8, link: 0x0040) == .indication)
        #expect(h.stack.le.clientConfiguration(valueHandle: 8, link: 0x0001)?.isEmpty == true)

        let level: [UInt8] = [0x42]
        let range: [UInt8] = [0x01, 0x00, 0xFF, 0xFF]
        let results = h.stack.perform(now: 0, output: &h.wire) { le in
            (le.notify(handle: 0x0040, attribute: v, value: level.span),
             le.indicate(handle: 0x0001, attribute: 8, value: range.span),
             le.notify(handle: 0x0001, attribute: v, value: level.span),
             le.indicate(handle: 0x0040, attribute: 8, value: range.span))
        }
        #expect(results.0 == .notEnabled && results.1 == .notEnabled)
        #expect(results.2 == .sent && results.3 == .sent)
        let sent = h.takeACL()
        #expect(sent.map { aclHandle($0) } == [0x0001, 0x0040])
        #expect(StackHarness.reassemble(sent).map(\.payload) == [[0x1B, UInt8(v), 0x00, 0x42], [0x1D, 0x08, 0x00] + range])
    }

    func aclHandle(_ packet: [UInt8]) -> UInt16 { (UInt16(packet[1]) | UInt16(packet[2]) << 8) & 0x0FFF }
}
