import Testing
import BluetoothHost
@testable import Herald

/// `HeraldSensor.initialize(_:...)` fills memory that holds no value yet, a stored property at a
/// time. A property it forgets (one added to the sensor, the central or the device database later)
/// would keep whatever the memory held: building over three different fills and comparing every
/// stored property with the value `init` builds finds it.
@Suite struct SensorInPlaceTests {
    typealias Sensor = HeraldSensor<SimplePayloadLayout, NoSensorDelegate, 8, 2, NoSensorPeripheral>

    @Test func inPlaceEqualsInitOverAnyPriorContents() {
        var configuration = HeraldSensorConfiguration.unspread
        configuration.connectionTimeout = 4_000
        let expected = Sensor(supplier: SimplePayloadLayout(), delegate: NoSensorDelegate(),
                              peripheral: NoSensorPeripheral(), configuration: configuration)
        Self.expectBuiltInPlaceOverAnyFill(equalTo: expected) { memory in
            Sensor.initialize(memory, supplier: SimplePayloadLayout(), delegate: NoSensorDelegate(),
                              peripheral: NoSensorPeripheral(), configuration: configuration)
            #expect(memory.pointee.core.central.database.count == 0)
        }
    }

    /// Builds a value with `initialize` over memory filled with 0x00, 0xFF and 0xA5 in turn, and
    /// expects every stored property to equal `expected`'s (`dump` of both).
    static func expectBuiltInPlaceOverAnyFill<T>(equalTo expected: T, _ initialize: (UnsafeMutablePointer<T>) -> Void) {
        var expectedDump = ""
        dump(expected, to: &expectedDump)
        let memory = UnsafeMutablePointer<T>.allocate(capacity: 1)
        defer { memory.deallocate() }
        for fill: UInt8 in [0x00, 0xFF, 0xA5] {
            UnsafeMutableRawPointer(memory).initializeMemory(as: UInt8.self, repeating: fill, count: MemoryLayout<T>.size)
            initialize(memory)
            var built = ""
            dump(memory.pointee, to: &built)
            #expect(built == expectedDump, "memory filled with \(fill) first")
        }
    }
}
