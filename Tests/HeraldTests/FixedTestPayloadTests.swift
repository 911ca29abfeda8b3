import Testing
import BluetoothHost
@testable import Herald

/// Protocol 0x08, herald-for-cpp's fixed test payload, as its C++ wearable serves it.
@Suite struct FixedTestPayloadTests {
    /// `08 3a03 0000 d202964900000000`: read from the reference's wearable on the simulated radio.
    static let reference = hex("083a030000d202964900000000")

    func parse(_ b: [UInt8], _ order: PayloadCodeByteOrder) throws(DecodeError) -> FixedTestPayload {
        try b.withUnsafeBufferPointer { buf throws(DecodeError) in try FixedTestPayload(parsing: Span(_unsafeElements: buf), order: order) }
    }

    @Test func theReferenceWearablesPayloadIsCountry826State0Client1234567890() throws {
        let p = try parse(Self.reference, .littleEndian)
        #expect(p == FixedTestPayload(countryCode: 826, stateCode: 0, clientIdentifier: 1_234_567_890))
        // Read in the specification's order the same bytes are other numbers: the option decides.
        let spec = try parse(Self.reference, .bigEndian)
        #expect(spec.header.countryCode == 0x3A03 && spec.clientIdentifier == 0xD202_9649_0000_0000)
    }

    @Test func writesWhatItParsesInBothOrders() throws {
        let p = FixedTestPayload(countryCode: 826, stateCode: 4, clientIdentifier: 0x0102_0304_0506_0708)
        for order in [PayloadCodeByteOrder.bigEndian, .littleEndian] {
            var s = ArraySink()
            p.write(order: order, to: &s)
            #expect(s.bytes.count == FixedTestPayload.size)
            #expect(try parse(s.bytes, order) == p)
        }
        var le = ArraySink()
        FixedTestPayload(countryCode: 826, stateCode: 0, clientIdentifier: 1_234_567_890).write(order: .littleEndian, to: &le)
        #expect(le.bytes == Self.reference)
    }

    @Test func refusesOtherProtocolsAndLengths() {
        #expect(throws: DecodeError.self) { try parse([0x09] + Array(Self.reference.dropFirst()), .littleEndian) }
        #expect(throws: DecodeError.self) { try parse(Array(Self.reference.dropLast()), .littleEndian) }
        #expect(throws: DecodeError.self) { try parse(Self.reference + [0], .littleEndian) }
        #expect(throws: DecodeError.self) { try parse([], .littleEndian) }
    }
}
