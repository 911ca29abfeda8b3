import Testing
import BluetoothHost
@testable import Herald

@Test func heraldServiceUUIDParses() throws {
    let uuid = try #require(BluetoothUUID(Herald.serviceUUIDString))
    #expect(uuid.wireSize == 16)
}
