import Foundation
import Testing
@_spi(UncheckedGATTTable) @testable import BluetoothHost
@testable import Herald

/// The firmware images serve their GATT database from a constant table in flash
/// (Firmware/<image>/gatt_table.c, layout in GATTConstantTable.swift). The services are defined here,
/// with the builder, and the table is generated from what the builder makes: this suite fails when a
/// checked-in table is not exactly that (regenerate with
/// `HERALD_WRITE_GATT_TABLES=1 swift test --filter FirmwareGATTTable`), and checks that the table,
/// served by the ATT server, answers every request as the builder's RAM database does.
@Suite struct FirmwareGATTTableTests {
    /// The beacon (Firmware/Beacon): GAP with its name and no spare room, GATT without Database Hash
    /// (its server features are `.mandatory`), the Herald service with the specification's UUID.
    static func beacon() throws -> GATTDatabase<16, 104, 2> {
        var db = try GATTDatabase<16, 104, 2>(deviceName: Array("Herald Beacon".utf8).span, deviceNameMaxLength: 0,
                                              features: .mandatory)
        try HeraldGATTProfile.add(to: &db, identifiers: .specification)
        return db
    }

    /// The wearable (Firmware/Wearable): no Database Hash either (`SensorLog.serverFeatures`).
    static func wearable() throws -> GATTDatabase<16, 112, 4> {
        var db = try GATTDatabase<16, 112, 4>(deviceName: Array("Herald Wearable".utf8).span, deviceNameMaxLength: 0,
                                              features: GATTServerFeatures(readMultiple: false, databaseHash: false,
                                                                           writeCommands: false))
        try HeraldGATTProfile.add(to: &db, identifiers: .specification)
        return db
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func beaconTableIsWhatTheBuilderMakes() throws {
        let db = try Self.beacon()
        // The beacon's server features (`.mandatory`) leave Write Commands out: nothing it serves may
        // offer Write Without Response.
        for i in 0..<db.count { #expect(!db.entry(i).properties.contains(.writeWithoutResponse), "handle \(i + 1)") }
        // So do the wearable's.
        let wearable = try Self.wearable()
        for i in 0..<wearable.count { #expect(!wearable.entry(i).properties.contains(.writeWithoutResponse), "handle \(i + 1)") }
        try checkFile(db, image: "Beacon", description: "the venue beacon: GAP (\"Herald Beacon\"), GATT, Herald")
        try checkServes(db, links: 2)
    }

    @Test func wearableTableIsWhatTheBuilderMakes() throws {
        let db = try Self.wearable()
        try checkFile(db, image: "Wearable", description: "the wearable: GAP (\"Herald Wearable\"), GATT, Herald")
        try checkServes(db, links: 4)
    }

    /// A database with every feature (Database Hash, writable CCCDs on 8 links) served from its table
    /// hashes and answers the same: the hash covers the declarations the table holds in its pool.
    /// The name has no spare room: a stored value with room to grow becomes a constant of its
    /// current length, which Read Blob then rightly calls fixed (Attribute Not Long within the first
    /// ATT_MTU - 1 octets) where the RAM database, whose value could grow, answers with the octets.
    @Test func fullDatabaseWithHashServesTheSame() throws {
        var db = try GATTStandardDatabase(deviceName: Array("herald".utf8).span, deviceNameMaxLength: 0)
        try HeraldGATTProfile.add(to: &db, identifiers: .registered)
        try db.addPrimaryService(BluetoothUUID(uuid16: 0x180D))
        try db.addCharacteristic(BluetoothUUID(uuid16: 0x2A37), properties: .notify, permissions: .none,
                                 value: .dynamic(id: 7))
        #expect(db.databaseHashHandle != 0)
        try checkServes(db, links: 8)
    }

    /// A table with a record or value outside it, or per-link values beyond the database's octets, is
    /// refused at start-up rather than read out of bounds later.
    @Test func malformedTablesAreRefused() throws {
        let db = try Self.beacon()
        var sink = ArraySink()
        let (_, perLink) = try db.writeConstantTable(to: &sink)
        let good = sink.bytes
        let cut = Array(good.dropLast())
        _ = cut.withUnsafeBufferPointer { t in
            #expect(throws: GATTDatabaseError.invalidTable) { try GATTDatabase<0, 6, 2>(table: t) }
        }
        #expect(perLink == 6)
        good.withUnsafeBufferPointer { t in
            #expect(throws: GATTDatabaseError.invalidTable) { try GATTDatabase<0, 5, 2>(table: t) }
            #expect(throws: GATTDatabaseError.invalidTable) { try GATTDatabase<4, 6, 2>(table: t) }
            #expect((try? GATTDatabase<0, 6, 2>(table: t)) != nil)
        }
        // A writable stored value cannot become a constant.
        var writable = try GATTDatabase<16, 128, 1>(deviceName: Array("w".utf8).span, features: .mandatory)
        try writable.addPrimaryService(BluetoothUUID(uuid16: 0x180F))
        try writable.addCharacteristic(BluetoothUUID(uuid16: 0x2A19), properties: .write, permissions: .readWrite,
                                       value: .stored([1].span, maxLength: 1))
        var ignored = ArraySink()
        #expect(throws: GATTDatabaseError.notConstant) { try writable.writeConstantTable(to: &ignored) }
    }

    /// The images serve their tables unchecked (`init(trustedTable:)`, Firmware/Common/Firmware.swift's
    /// `makeDatabase`): what `init(table:)` checked at start-up is checked here instead. The trusted
    /// database finds the same handles as the checked one (a Database Hash too), and each image's stack
    /// type (`BluetoothStack<App, L, 0, V>` in its main.swift) has the links and at least the per-link
    /// octets its table needs: fewer, and a CCCD write would trap past the database's values.
    @Test func imagesServeTheirTablesUnchecked() throws {
        var full = try GATTStandardDatabase(deviceName: Array("herald".utf8).span, deviceNameMaxLength: 0)
        try HeraldGATTProfile.add(to: &full, identifiers: .registered)
        var fullSink = ArraySink()
        _ = try full.writeConstantTable(to: &fullSink)
        #expect(full.databaseHashHandle != 0)
        try trustedMatchesChecked(fullSink.bytes, full)
        var beaconSink = ArraySink(), wearableSink = ArraySink()
        let beacon = try Self.beacon(), wearable = try Self.wearable()
        let (_, beaconPerLink) = try beacon.writeConstantTable(to: &beaconSink)
        let (_, wearablePerLink) = try wearable.writeConstantTable(to: &wearableSink)
        try trustedMatchesChecked(beaconSink.bytes, beacon)
        try trustedMatchesChecked(wearableSink.bytes, wearable)
        for (image, links, perLink) in [("Beacon", 2, beaconPerLink), ("Wearable", 4, wearablePerLink)] {
            let main = try String(contentsOf: Self.repository.appendingPathComponent("Firmware/\(image)/main.swift"), encoding: .utf8)
            let match = try #require(main.firstMatch(of: /typealias \w+ = BluetoothStack(?:Of)?<\w+, (\d+), 0, (\d+)[,>]/),
                                     "Firmware/\(image)/main.swift declares no BluetoothStack<App, L, 0, V> (or BluetoothStackOf)")
            #expect(Int(match.1) == links, "\(image): links")
            #expect(Int(match.2)! >= perLink, "\(image): \(perLink) per-link octets needed")
        }
    }

    func trustedMatchesChecked<let A: Int, let V: Int, let L: Int>(_ bytes: [UInt8], _ db: GATTDatabase<A, V, L>) throws {
        try bytes.withUnsafeBufferPointer { t throws in
            let checked = try GATTDatabase<0, V, L>(table: t)
            let trusted = GATTDatabase<0, V, L>(trustedTable: t)
            #expect(trusted.count == checked.count && trusted.count == db.count)
            #expect(trusted.clientSupportedFeaturesHandle == checked.clientSupportedFeaturesHandle)
            #expect(trusted.databaseHashHandle == checked.databaseHashHandle)
            #expect(trusted.clientSupportedFeaturesHandle == db.clientSupportedFeaturesHandle)
            #expect(trusted.databaseHashHandle == db.databaseHashHandle)
        }
    }

    // MARK: Helpers

    func checkFile<let A: Int, let V: Int, let L: Int>(_ db: GATTDatabase<A, V, L>, image: String, description: String) throws {
        var sink = ArraySink()
        let (_, perLink) = try db.writeConstantTable(to: &sink)
        let text = Self.cSource(sink.bytes, db: db, perLink: perLink, links: L, description: description)
        let url = Self.repository.appendingPathComponent("Firmware/\(image)/gatt_table.c")
        if ProcessInfo.processInfo.environment["HERALD_WRITE_GATT_TABLES"] == "1" {
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        let checkedIn = try String(contentsOf: url, encoding: .utf8)
        #expect(checkedIn == text, "Firmware/\(image)/gatt_table.c is not what the builder makes; regenerate it (see this suite)")
    }

    /// The table served next to the RAM database: every attribute the same, and the same answer to
    /// each request a phone sends (discovery, reads of every handle, CCCD and Client Supported
    /// Features writes, then reads of them, on each link).
    func checkServes<let A: Int, let V: Int, let L: Int>(_ ram: GATTDatabase<A, V, L>, links: Int) throws {
        var sink = ArraySink()
        _ = try ram.writeConstantTable(to: &sink)
        let bytes = sink.bytes
        try bytes.withUnsafeBufferPointer { t throws in
            // V octets are enough: the table's per-link values are a subset of the RAM database's.
            var table = try GATTDatabase<0, V, L>(table: t)
            var ram = ram
            #expect(table.count == ram.count)
            #expect(table.clientSupportedFeaturesHandle == ram.clientSupportedFeaturesHandle)
            #expect(table.databaseHashHandle == ram.databaseHashHandle)
            for h in 1...UInt16(ram.count) {
                let a = try #require(ram.attribute(h)), b = try #require(table.attribute(h))
                #expect(a.type == b.type && a.permissions == b.permissions && a.properties == b.properties
                        && a.cccdHandle == b.cccdHandle, "handle \(h)")
                #expect(Array(span: ram.value(h)) == Array(span: table.value(h)), "value of handle \(h)")
                if case .dynamic(let id) = a.storage { #expect(b.storage == .dynamic(id: id)) }
            }
            var requests: [[UInt8]] = [
                [0x02, 0xF7, 0x00],
                [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28], [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x01, 0x28],
                [0x06, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x01, 0x18],
                [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28], [0x04, 0x01, 0x00, 0xFF, 0xFF],
            ]
            for h in 0...UInt16(ram.count + 1) {
                requests.append([0x0A, UInt8(h & 0xFF), UInt8(h >> 8)])
                requests.append([0x0C, UInt8(h & 0xFF), UInt8(h >> 8), 0x01, 0x00])
                requests.append([0x12, UInt8(h & 0xFF), UInt8(h >> 8), 0x02, 0x00])
                requests.append([0x12, UInt8(h & 0xFF), UInt8(h >> 8), 0x01])
                requests.append([0x0A, UInt8(h & 0xFF), UInt8(h >> 8)])
            }
            let connections = ServerLinks((0..<links).map { 0x0040 + UInt16($0) })
            for link in 0..<links {
                let named = connections[0x0040 + UInt16(link)]
                var ramBearer = ATTStandardBearer(), tableBearer = ATTStandardBearer()
                var ramDelegate = ATTAnswers(), tableDelegate = ATTAnswers()
                for request in requests {
                    var x = ArraySink(), y = ArraySink()
                    let ax = ATTServer().handle(pdu: request.span, bearer: &ramBearer, link: named, now: 0,
                                                database: &ram, delegate: &ramDelegate, response: &x)
                    let ay = ATTServer().handle(pdu: request.span, bearer: &tableBearer, link: named, now: 0,
                                                database: &table, delegate: &tableDelegate, response: &y)
                    #expect(ax == ay && x.bytes == y.bytes, "link \(link) request \(hexString(request))")
                }
                #expect(ramDelegate.events == tableDelegate.events)
                ram.resetLink(named)
                table.resetLink(named)
            }
        }
    }

    /// Dynamic values answered by id, and the configuration changes the server reports.
    struct ATTAnswers: GATTServerDelegate {
        var events: [String] = []
        mutating func read<S: ByteSink>(id: UInt16, link: UInt16, offset: Int, into sink: inout S) -> ATTErrorCode? {
            sink.append(u16: id)
            return nil
        }
        mutating func write(id: UInt16, link: UInt16, offset: Int, value: Span<UInt8>) -> ATTErrorCode? {
            events.append("write \(id) \(link)")
            return nil
        }
        mutating func clientConfigurationChanged(valueHandle: UInt16, link: UInt16, configuration: GATTClientConfiguration) {
            events.append("cccd \(valueHandle) \(link) \(configuration.rawValue)")
        }
    }

    /// The C file an image compiles: the table as a `const` array (in flash) and two accessors.
    static func cSource<let A: Int, let V: Int, let L: Int>(_ table: [UInt8], db: GATTDatabase<A, V, L>, perLink: Int,
                                                           links: Int, description: String) -> String {
        func line(_ b: ArraySlice<UInt8>) -> String { b.map { String(format: "0x%02x,", $0) }.joined(separator: " ") }
        var s = """
        // The GATT database of \(description), as a constant table in flash
        // (layout: Sources/BluetoothHost/GATT/GATTConstantTable.swift). Generated from the builder's database
        // by Tests/HeraldTests/FirmwareGATTTableTests.swift, which defines the services and fails when this
        // file differs; regenerate: HERALD_WRITE_GATT_TABLES=1 swift test --filter FirmwareGATTTable
        // \(db.count) attributes, \(table.count) octets; per-link values in RAM: \(perLink) octets for \(links) links,
        // the image's GATTDatabase<0, \(perLink), \(links)>.
        #include <stdint.h>

        static const uint8_t table[\(table.count)] = {
            \(line(table[0..<2])) // attribute count

        """
        let records = GATTConstantTable.headerSize
        for i in 0..<db.count {
            let r = records + i * GATTConstantTable.recordSize
            let a = db.entry(i)
            let type = a.type.uuid16.map { String(format: "0x%04X", $0) } ?? "128-bit"
            s += "    \(line(table[r..<(r + GATTConstantTable.recordSize)])) // handle \(i + 1): \(type)\n"
        }
        var p = records + db.count * GATTConstantTable.recordSize
        s += "    // pool: constant values and 128-bit UUIDs\n"
        while p < table.count {
            s += "    \(line(table[p..<min(p + 12, table.count)]))\n"
            p += 12
        }
        s += """
        };

        const uint8_t *firmware_gatt_table(void) { return table; }
        uint32_t firmware_gatt_table_size(void) { return sizeof table; }

        """
        return s
    }
}

extension Array where Element == UInt8 {
    init(span: Span<UInt8>) { self = (0..<span.count).map { span[$0] } }
}
