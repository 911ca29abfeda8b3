import Testing
@testable import BluetoothHost

/// Plain data only, as `BluetoothStack.initialize(_:...)` requires of the whole stack.
struct InPlacePlainApp: LEApplication {
    var value: UInt32
    var seen: UInt16? = nil
}

/// `BluetoothStack.initialize(_:...)` fills memory that holds no value yet, a stored property at a
/// time. A property it forgets (one added to `LEStack`, `StackControl` or `ConnectionTable` later)
/// would keep whatever the memory held: building over three different fills and comparing every
/// stored property with the value `init` builds finds it.
@Suite struct BluetoothStackInPlaceTests {
    typealias Stack = BluetoothStack<InPlacePlainApp, 3, 24, 256>

    @Test func inPlaceEqualsInitOverAnyPriorContents() throws {
        let configuration = HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6])
        var db = try GATTDatabase<24, 256, 3>(deviceName: [0x68, 0x69].span)
        _ = try db.addPrimaryService(BluetoothUUID(uuid16: 0x180F))
        _ = try db.addCharacteristic(BluetoothUUID(uuid16: 0x2A19), properties: .read | .notify,
                                     permissions: .read, value: .dynamic(id: 1))
        let expected = Stack(configuration: configuration, database: db, app: InPlacePlainApp(value: 7), maximumMTU: 185)
        var expectedDump = ""
        dump(expected, to: &expectedDump)
        let memory = UnsafeMutablePointer<Stack>.allocate(capacity: 1)
        defer { memory.deallocate() }
        for fill: UInt8 in [0x00, 0xFF, 0xA5] {
            UnsafeMutableRawPointer(memory).initializeMemory(as: UInt8.self, repeating: fill, count: MemoryLayout<Stack>.size)
            Stack.initialize(memory, configuration: configuration, database: db, maximumMTU: 185) {
                $0.initialize(to: InPlacePlainApp(value: 7))
            }
            var built = ""
            dump(memory.pointee, to: &built)
            #expect(built == expectedDump, "memory filled with \(fill) first")
            #expect(memory.pointee.le.connections.isEmpty)
            #expect(memory.pointee.le.connections.handle(at: 2) == nil)
            #expect(memory.pointee.le.database.count == db.count)
        }
    }

    /// The overload that builds the database in its place too gives the same value, and reports a
    /// database that does not fit instead of building a stack around it.
    @Test func databaseBuiltInPlaceEqualsInit() throws {
        let configuration = HostConfiguration(randomAddressSeed: [1, 2, 3, 4, 5, 6])
        func build(_ db: inout GATTDatabase<24, 256, 3>) throws(GATTDatabaseError) {
            _ = try db.addPrimaryService(BluetoothUUID(uuid16: 0x180F))
            _ = try db.addCharacteristic(BluetoothUUID(uuid16: 0x2A19), properties: .read | .notify,
                                         permissions: .read, value: .dynamic(id: 1))
        }
        var db = try GATTDatabase<24, 256, 3>(deviceName: [0x68, 0x69].span)
        try build(&db)
        var expectedDump = ""
        dump(Stack(configuration: configuration, database: db, app: InPlacePlainApp(value: 7), maximumMTU: 185), to: &expectedDump)
        let memory = UnsafeMutablePointer<Stack>.allocate(capacity: 1)
        defer { memory.deallocate() }
        for fill: UInt8 in [0x00, 0xFF, 0xA5] {
            UnsafeMutableRawPointer(memory).initializeMemory(as: UInt8.self, repeating: fill, count: MemoryLayout<Stack>.size)
            let built = Stack.initialize(memory, configuration: configuration, maximumMTU: 185, database: { place in
                guard let db = try? GATTDatabase<24, 256, 3>(deviceName: [0x68, 0x69].span) else { return false }
                place.initialize(to: db)
                return (try? build(&place.pointee)) != nil
            }) { $0.initialize(to: InPlacePlainApp(value: 7)) }
            #expect(built)
            var dumped = ""
            dump(memory.pointee, to: &dumped)
            #expect(dumped == expectedDump, "memory filled with \(fill) first")
        }
        let refused = Stack.initialize(memory, configuration: configuration, database: { _ in false }) {
            $0.initialize(to: InPlacePlainApp(value: 7))
        }
        #expect(!refused)
    }
}
