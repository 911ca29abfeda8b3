import Testing
@testable import BluetoothHost
@testable import Herald

/// The Herald service's layout in a GATT database, checked attribute by attribute and over ATT.
@Suite struct GATTProfileTests {
    typealias DB = GATTDatabase<32, 256, 2>

    func database(_ identifiers: HeraldAdvertIdentifiers = .specification) throws -> (DB, HeraldGATTHandles) {
        var db = try DB(deviceName: Array("herald".utf8).span)
        let handles = try HeraldGATTProfile.add(to: &db, identifiers: identifiers)
        return (db, handles)
    }

    func valueBytes(_ db: DB, _ handle: UInt16) -> [UInt8] {
        let v = db.value(handle)
        return (0..<v.count).map { v[$0] }
    }

    @Test func layoutFollowsTheMandatoryServicesLikeTheReferencePhone() throws {
        let (db, h) = try database()
        // GAP 0x0001-0x0005, GATT 0x0006-0x000D, then ours, as in herald-phone-peripheral.btsnoop.
        #expect(h.service == 0x000E)
        #expect(h.payload == GATTCharacteristicHandles(declaration: 0x000F, value: 0x0010, clientConfiguration: 0))
        #expect(h.signal == GATTCharacteristicHandles(declaration: 0x0011, value: 0x0012, clientConfiguration: 0))
        #expect(db.count == 0x0012)
        #expect(Int(db.count) - Int(h.service) + 1 == HeraldGATTProfile.attributeCount)

        // Service declaration: the 128-bit UUID, little-endian (Core 5.4 Vol 3 Part G 3.1).
        #expect(db.attribute(h.service)?.type == BluetoothUUID(uuid16: 0x2800))
        #expect(valueBytes(db, h.service) == hex("9bfd5bd672451e80d3424647af328142"))
        // Payload: properties Read (0x02), value handle 0x0010, UUID 3e98c0f8-...
        #expect(valueBytes(db, h.payload.declaration) == hex("02 1000") + hex("e733898fe34321a12948058ff8c0983e"))
        // Signal: properties Write (0x08) only: no write without response, no notify.
        #expect(valueBytes(db, h.signal.declaration) == hex("08 1200") + hex("111a82809ae024837a432e0913b817f6"))
    }

    @Test func valuesAreDynamicWithMatchingPermissions() throws {
        var (db, h) = try database()
        let payload = try #require(db.attribute(h.payload.value))
        let signal = try #require(db.attribute(h.signal.value))
        #expect(payload.type == HeraldIdentifiers.payloadCharacteristicUUID)
        #expect(payload.storage == .dynamic(id: HeraldGATTProfile.payloadValueID))
        #expect(payload.permissions == .read)
        #expect(signal.type == HeraldIdentifiers.androidSignalCharacteristicUUID)
        #expect(signal.storage == .dynamic(id: HeraldGATTProfile.signalValueID))
        #expect(signal.permissions == .write)
        // Reading the signal characteristic or writing the payload is refused by the server itself.
        #expect(db.checkAccess(h.signal.value, write: false, security: ATTLinkSecurity()) == .readNotPermitted)
        #expect(db.checkAccess(h.payload.value, write: true, security: ATTLinkSecurity()) == .writeNotPermitted)
    }

    @Test func registeredIdentifierUsesThe16BitUUID() throws {
        var (db, h) = try database(.registered)
        #expect(valueBytes(db, h.service) == hex("f6fc"))
        #expect(db.groupEnd(ofService: h.service) == h.signal.value)
    }

    @Test func discoveryOverATTFindsTheServiceAndCharacteristics() throws {
        var (db, h) = try database()
        var bearer = ATTStandardBearer()
        var delegate = GATTNoDelegate()
        let server = ATTServer()
        func ask(_ pdu: [UInt8]) -> [UInt8] {
            var out = ArraySink()
            _ = server.handle(pdu: pdu.span, bearer: &bearer, link: ServerLinks()[0x0040], now: 0, database: &db, delegate: &delegate, response: &out)
            return out.bytes
        }
        // Read By Group Type for primary services from 0x000E: one 128-bit entry (length 20).
        #expect(ask(hex("10 0e00 ffff 0028")) == hex("11 14 0e00 1200") + hex("9bfd5bd672451e80d3424647af328142"))
        // Discover the service by UUID (Find By Type Value), as Herald centrals do.
        #expect(ask(hex("06 0100 ffff 0028") + hex("9bfd5bd672451e80d3424647af328142")) == hex("07 0e00 1200"))
        // Characteristic declarations in the service (Read By Type 0x2803): one per response at MTU 23.
        #expect(ask(hex("08 0e00 1200 0328")) == hex("09 15 0f00 02 1000") + hex("e733898fe34321a12948058ff8c0983e"))
        #expect(ask(hex("08 1000 1200 0328")) == hex("09 15 1100 08 1200") + hex("111a82809ae024837a432e0913b817f6"))
        // With no application behind the values, reads and writes are refused, not answered with junk.
        #expect(ask(hex("0a 1000")) == hex("01 0a 1000 02"))
        _ = h
    }

    @Test func fullDatabaseIsAReportedError() throws {
        var small = try GATTDatabase<14, 256, 1>(deviceName: Array("h".utf8).span)
        #expect(throws: GATTDatabaseError.tooManyAttributes) { try HeraldGATTProfile.add(to: &small) }
        var noValues = try GATTDatabase<32, 100, 1>(deviceName: Array("h".utf8).span)
        #expect(throws: GATTDatabaseError.valueStorageFull) { try HeraldGATTProfile.add(to: &noValues) }
    }
}
