import Testing
@testable import BluetoothHost

/// A link is named by its HCI connection handle at every interface the stack offers: the
/// `LEApplication` callbacks, the `GATTServerDelegate` calls and the per-link lookups. Where the
/// stack keeps a link (its connection-table slot) stays inside the stack.
@Suite struct LinkNamingTests {
    /// 0x40 and 0x41 come up, 0x40 goes, 0x42 takes the slot 0x40 had: the stack's slots (0, 1, 0)
    /// no longer follow the order the links came in.
    func interleaved() throws -> StackHarness {
        var h = try StackHarness()
        h.feed(StackHarness.connectionComplete(handle: 0x0040, role: 0x01))
        h.feed(StackHarness.connectionComplete(handle: 0x0041, role: 0x01))
        h.feed([0x04, 0x05, 0x04, 0x00, 0x40, 0x00, 0x13])  // Disconnection Complete, 0x0040
        h.feed(StackHarness.connectionComplete(handle: 0x0042, role: 0x01))
        #expect(h.stack.app.connected.map(\.slot) == [0, 1, 0], "the freed slot is reused")
        return h
    }

    @Test func gattServerCallsNameTheLinkByHandle() throws {
        var h = try interleaved()
        let v = h.valueHandle
        let cccd = v + 1
        h.feed(StackHarness.acl(handle: 0x0042, channel: 4, [0x12, UInt8(v), 0x00, 0x42]))
        h.feed(StackHarness.acl(handle: 0x0041, channel: 4, [0x12, UInt8(v), 0x00, 0x41]))
        h.feed(StackHarness.acl(handle: 0x0042, channel: 4, [0x12, UInt8(cccd), 0x00, 0x01, 0x00]))
        #expect(h.stack.app.writes == [[0x42], [0x41]])
        #expect(h.stack.app.writers == [0x0042, 0x0041])
        #expect(h.stack.app.configured.map(\.link) == [0x0042] && h.stack.app.configured.map(\.value) == [1])
        // The CCCD is kept in 0x42's slot and read back by handle; 0x41 has its own, 0x40 is gone.
        #expect(h.stack.le.clientConfiguration(valueHandle: v, link: 0x0042) == .notification)
        #expect(h.stack.le.clientConfiguration(valueHandle: v, link: 0x0041)?.isEmpty == true)
        #expect(h.stack.le.clientConfiguration(valueHandle: v, link: 0x0040) == nil)
    }

    /// `replaceDatabase` moves each link's GATT service state (Service Changed CCCD, Client
    /// Supported Features) to the new database by slot, inside the stack, and starts the new
    /// database's other per-link values cleared.
    @Test func replacingTheDatabaseKeepsEachLinksGATTServiceState() throws {
        var h = try interleaved()
        let sc = h.stack.le.database.serviceChanged
        let features = h.stack.le.database.clientSupportedFeaturesHandle
        let v = h.valueHandle
        h.feed(StackHarness.acl(handle: 0x0042, channel: 4, [0x12, UInt8(sc.clientConfiguration), 0x00, 0x02, 0x00]))
        h.feed(StackHarness.acl(handle: 0x0041, channel: 4, [0x12, UInt8(features), 0x00, 0x01]))
        h.feed(StackHarness.acl(handle: 0x0041, channel: 4, [0x12, UInt8(v + 1), 0x00, 0x01, 0x00]))
        var next = try GATTDatabase<24, 256, 4>(deviceName: [0x6E].span)
        _ = try next.addPrimaryService(BluetoothUUID(uuid16: 0x180F))
        _ = try next.addCharacteristic(BluetoothUUID(uuid16: 0x2A19), properties: .read | .write | .notify,
                                       permissions: .readWrite, value: .dynamic(id: 7))
        // Stale per-link values in the database being brought in, where the stack keeps 0x41.
        var stale = GATTNoDelegate()
        let link41 = try h.stack.le.connections.serverLink(handle: 0x0041)
        _ = next.writeValue(v + 1, link: link41, offset: 0, value: [0x01, 0x00].span,
                            delegate: &stale)
        let old = h.stack.le.replaceDatabase(with: next)
        #expect(old.clientConfiguration(valueHandle: sc.value, link: try h.stack.le.connections.serverLink(handle: 0x0042))
                == .indication)
        #expect(h.stack.le.clientConfiguration(valueHandle: sc.value, link: 0x0042) == .indication)
        #expect(h.stack.le.clientConfiguration(valueHandle: sc.value, link: 0x0041)?.isEmpty == true)
        #expect(h.stack.le.clientSupportedFeatures(link: 0x0041) == 0x01)
        #expect(h.stack.le.clientSupportedFeatures(link: 0x0042) == 0)
        #expect(h.stack.le.clientConfiguration(valueHandle: v, link: 0x0041)?.isEmpty == true)
    }
}
