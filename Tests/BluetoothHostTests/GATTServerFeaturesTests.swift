import Testing
@testable import BluetoothHost

/// A server that offers only what Core 5.4 Vol 3 Part G Table 4.2 makes mandatory.
struct MandatoryServerDelegate: GATTServerDelegate {
    static var serverFeatures: GATTServerFeatures { .mandatory }
}

/// Offers Read Multiple but neither long writes nor the Database Hash.
struct ReadMultipleOnlyDelegate: GATTServerDelegate {
    static var serverFeatures: GATTServerFeatures { GATTServerFeatures(queuedWrites: false, databaseHash: false) }
}

struct MandatoryServerApp: LEApplication {
    static var serverFeatures: GATTServerFeatures { .mandatory }
}

@Suite struct GATTServerFeaturesTests {
    /// One request on the test's bearer; the response bytes (empty when there is none).
    static func answer<D: GATTServerDelegate>(_ hex: String, _ db: inout GATTStandardDatabase, _ delegate: inout D,
                                              bearer: inout ATTBearer<D.PrepareQueue>) -> [UInt8] {
        var out = ATTTestSink()
        let action = ATTServer().handle(pdu: attHex(hex).span, bearer: &bearer, link: ServerLinks()[0x0040], now: 0,
                                        database: &db, delegate: &delegate, response: &out)
        #expect(action == .respond || out.bytes.isEmpty)
        return out.bytes
    }

    static func database(_ features: GATTServerFeatures) throws -> GATTStandardDatabase {
        var db = try GATTStandardDatabase(deviceName: Array("herald".utf8).span, features: features)
        try db.addPrimaryService(BluetoothUUID(uuid16: 0x180F))
        try db.addCharacteristic(BluetoothUUID(uuid16: 0x2A19), properties: GATTCharacteristicProperties.read | .write,
                                 permissions: .readWrite, value: .stored([UInt8(80)].span, maxLength: 40))
        return db
    }

    @Test func withoutDatabaseHashTheGATTServiceEndsAtClientSupportedFeatures() throws {
        let all = try Self.database(.all)
        var db = try Self.database(.mandatory)
        #expect(db.count == all.count - 2)  // no Database Hash declaration and value
        #expect(db.databaseHashHandle == 0)
        var delegate = MandatoryServerDelegate()
        var bearer = ATTStandardBearer()
        // Read By Type for Database Hash (0x2B2A) over every handle: Attribute Not Found (0x0A).
        #expect(Self.answer("08 01 00 ff ff 2a 2b", &db, &delegate, bearer: &bearer) == attHex("01 08 01 00 0a"))
        // The GATT service (0x0006...) is still discovered, now ending at Client Supported Features.
        let groups = Self.answer("10 01 00 ff ff 00 28", &db, &delegate, bearer: &bearer)
        #expect(Array(groups.prefix(8)) == attHex("11 06 01 00 05 00 00 18"))
        #expect(Array(groups[8..<14]) == attHex("06 00 0b 00 01 18"))
    }

    @Test func leftOutProceduresAreRequestNotSupported() throws {
        var db = try Self.database(.mandatory)
        var delegate = MandatoryServerDelegate()
        var bearer = ATTStandardBearer()
        // Error Response: opcode 0x01, the request's opcode, handle 0x0000, 0x06 Request Not Supported.
        #expect(Self.answer("0e 03 00 05 00", &db, &delegate, bearer: &bearer) == attHex("01 0e 00 00 06"))  // Read Multiple
        #expect(Self.answer("20 03 00 05 00", &db, &delegate, bearer: &bearer) == attHex("01 20 00 00 06"))  // Read Multiple Variable
        #expect(Self.answer("16 0e 00 00 00 41", &db, &delegate, bearer: &bearer) == attHex("01 16 00 00 06"))  // Prepare Write
        #expect(Self.answer("18 01", &db, &delegate, bearer: &bearer) == attHex("01 18 00 00 06"))  // Execute Write
        // What a server must do still works: read, write, discovery.
        #expect(Self.answer("0a 0e 00", &db, &delegate, bearer: &bearer) == attHex("0b 50"))
        #expect(Self.answer("12 0e 00 4b", &db, &delegate, bearer: &bearer) == attHex("13"))
        #expect(Self.answer("0a 0e 00", &db, &delegate, bearer: &bearer) == attHex("0b 4b"))
        #expect(Self.answer("04 01 00 01 00", &db, &delegate, bearer: &bearer) == attHex("05 01 01 00 00 28"))
    }

    @Test func featuresAreChosenOneByOne() throws {
        var db = try Self.database(GATTServerFeatures(queuedWrites: false, databaseHash: false))
        var delegate = ReadMultipleOnlyDelegate()
        var bearer = ATTStandardBearer()
        // Read Multiple: the battery level (0x000E) then Appearance (0x0005, two zero octets).
        #expect(Self.answer("0e 0e 00 05 00", &db, &delegate, bearer: &bearer) == attHex("0f 50 00 00"))
        #expect(Self.answer("16 0e 00 00 00 41", &db, &delegate, bearer: &bearer) == attHex("01 16 00 00 06"))
    }

    /// A Write Command to a value that takes Write Without Response changes it when the server offers
    /// commands, and is dropped unanswered when it does not (`.mandatory`).
    @Test func writeCommandsAreDroppedWhenLeftOut() throws {
        func database(_ features: GATTServerFeatures) throws -> GATTStandardDatabase {
            var db = try GATTStandardDatabase(deviceName: Array("herald".utf8).span, features: features)
            try db.addPrimaryService(BluetoothUUID(uuid16: 0x180F))
            try db.addCharacteristic(BluetoothUUID(uuid16: 0x2A19), properties: GATTCharacteristicProperties.read | .writeWithoutResponse,
                                     permissions: .readWrite, value: .stored([UInt8(80)].span, maxLength: 40))
            return db
        }
        var bearer = ATTStandardBearer()
        var all = try database(.all)
        var everything = GATTNoDelegate()
        // With the Database Hash the value is at 0x0010; without it (`.mandatory`), at 0x000E.
        #expect(Self.answer("52 10 00 4b", &all, &everything, bearer: &bearer).isEmpty)
        #expect(Self.answer("0a 10 00", &all, &everything, bearer: &bearer) == attHex("0b 4b"))
        var mandatory = try database(.mandatory)
        var delegate = MandatoryServerDelegate()
        #expect(Self.answer("52 0e 00 4b", &mandatory, &delegate, bearer: &bearer).isEmpty)
        #expect(Self.answer("0a 0e 00", &mandatory, &delegate, bearer: &bearer) == attHex("0b 50"))
    }

    @Test func everyProcedureIsOfferedByDefault() throws {
        #expect(GATTNoDelegate.serverFeatures == .all)
        #expect(GATTServerFeatures.all == GATTServerFeatures(readMultiple: true, queuedWrites: true, databaseHash: true,
                                                             writeCommands: true))
        // With the Database Hash the battery level's value is at 0x0010, not 0x000E.
        var db = try Self.database(.all)
        var delegate = GATTNoDelegate()
        var bearer = ATTStandardBearer()
        #expect(Self.answer("0e 10 00 05 00", &db, &delegate, bearer: &bearer) == attHex("0f 50 00 00"))
        #expect(Self.answer("16 10 00 00 00 41", &db, &delegate, bearer: &bearer) == attHex("17 10 00 00 00 41"))
        #expect(Self.answer("18 01", &db, &delegate, bearer: &bearer) == attHex("19"))
        #expect(Self.answer("0a 10 00", &db, &delegate, bearer: &bearer) == attHex("0b 41"))
        let hash = Self.answer("0a " + le16(db.databaseHashHandle), &db, &delegate, bearer: &bearer)
        #expect(hash.count == 17 && hash[0] == 0x0B)
    }

    @Test func aStackRefusesADatabaseHashItsApplicationLeavesOut() async throws {
        await #expect(processExitsWith: .failure) {
            let db = try! GATTDatabase<24, 128, 1>(deviceName: Array("x".utf8).span)
            _ = LEStack<MandatoryServerApp, 1, 24, 128>(app: MandatoryServerApp(), database: db)
        }
        // Built to match, it starts.
        let db = try GATTDatabase<24, 128, 1>(deviceName: Array("x".utf8).span, features: MandatoryServerApp.serverFeatures)
        let stack = LEStack<MandatoryServerApp, 1, 24, 128>(app: MandatoryServerApp(), database: db)
        #expect(stack.database.databaseHashHandle == 0)
    }
}
