import Testing
@testable import BluetoothHost

/// Read Using Characteristic UUID (Core 5.4 Vol 3 Part G 4.8.2): a Read By Type of the UUID over every
/// handle, then Read Blob while the value fills what a response holds.
@Suite struct GATTReadUsingUUIDTests {
    @Test func scriptedResponsesAtMTU23() {
        // The request: Read By Type, 0x0001...0xFFFF, the 128-bit UUID (Part F 3.4.4.1).
        var c = TestClient()
        let request = c.startBytes(.readUsingCharacteristicUUID(heraldPayloadUUID))
        #expect(request.prefix(5) == [0x08, 0x01, 0x00, 0xFF, 0xFF] && request.count == 21)
        // 19 octets (ATT_MTU-4) fill the entry: Read Blob from 19 on the handle it named.
        let value = (0..<30).map { UInt8($0) }
        #expect(c.feed([0x09, 0x15, 0x08, 0x00] + value[0..<19]) == (.send, attHex("0c 08 00 13 00")))
        #expect(c.feed([0x0D] + value[19...]) == (.none, []))
        #expect(c.delegate.reads.map(\.handle) == [8, 8] && c.delegate.assembled == value)
        #expect(c.lastError == nil && c.delegate.completions.first?.procedure == .readUsingCharacteristicUUID)

        // A shorter value is all there: one round trip.
        var short = TestClient()
        _ = short.startBytes(.readUsingCharacteristicUUID(heraldPayloadUUID))
        #expect(short.feed([0x09, 0x0A, 0x08, 0x00] + value[0..<8]) == (.none, []))
        #expect(short.delegate.assembled == Array(value[0..<8]) && short.lastError == nil)

        // No such characteristic: the server's Attribute Not Found is the procedure's error.
        var none = TestClient()
        _ = none.startBytes(.readUsingCharacteristicUUID(heraldPayloadUUID))
        #expect(none.feed("01 08 01 00 0a") == (.none, []))
        #expect(none.lastError == .attError(.attributeNotFound, handle: 1))

        // An entry longer than ATT_MTU-4 allows, or handle 0x0000, is refused.
        var long = TestClient()
        _ = long.startBytes(.readUsingCharacteristicUUID(heraldPayloadUUID))
        _ = long.feed([0x09, 0x16, 0x08, 0x00] + value[0..<20])
        #expect(long.lastError == .invalidResponse && long.delegate.reads.isEmpty)
        var zero = TestClient()
        _ = zero.startBytes(.readUsingCharacteristicUUID(heraldPayloadUUID))
        _ = zero.feed([0x09, 0x06, 0x00, 0x00] + value[0..<4])
        #expect(zero.lastError == .invalidResponse)
    }

    /// Against our own server: the 200-octet value whole, at ATT_MTU 23 and 247.
    @Test func ourServerAnswersIt() throws {
        var small = try GATTLoopback()
        try small.run(.readUsingCharacteristicUUID(heraldPayloadUUID))
        #expect(small.delegate.assembled == small.payload)
        #expect(small.delegate.reads.map(\.offset) == [0] + Array(stride(from: 19, through: 195, by: 22)))
        #expect(small.sent(.readByTypeRequest).count == 1 && small.sent(.readBlobRequest).count == 9)
        #expect(small.delegate.completions.last?.error == nil)

        var big = try GATTLoopback()
        try big.run(.exchangeMTU)
        try big.run(.readUsingCharacteristicUUID(heraldPayloadUUID))
        #expect(big.delegate.assembled == big.payload && big.delegate.reads.count == 1)
        #expect(big.sent(.readBlobRequest).isEmpty)
    }
}
