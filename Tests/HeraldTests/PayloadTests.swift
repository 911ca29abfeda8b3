import Testing
import BluetoothHost
@testable import Herald

@Suite struct PayloadTests {
    /// The phone in shared/captures serves this Simple payload (country 826 = 0x033a, state 1).
    static let phonePayload = hex("10033a0001") + [UInt8](repeating: 0x5a, count: 16)

    struct Parsed: Equatable { var header: PayloadHeader; var id: [UInt8]; var ext: [UInt8] }

    func parseSimple(_ b: [UInt8], order: PayloadCodeByteOrder = .bigEndian) throws(DecodeError) -> Parsed {
        try b.withUnsafeBufferPointer { buf throws(DecodeError) in
            let p = try SimplePayload(parsing: Span(_unsafeElements: buf), order: order)
            let header = p.header, id = bytes(p.contactIdentifier)
            var ext: [UInt8] = []
            for i in p.extendedData.indices { ext.append(p.extendedData[i]) }
            return Parsed(header: header, id: id, ext: ext)
        }
    }

    @Test func capturedSimplePayloadIsBigEndian() throws {
        let p = try parseSimple(Self.phonePayload)
        #expect(p.header == PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 1))
        #expect(p.id == [UInt8](repeating: 0x5a, count: 16))
        #expect(p.ext.isEmpty)
        let le = try parseSimple(Self.phonePayload, order: .littleEndian)
        #expect(le.header.countryCode == 0x3a03 && le.header.stateCode == 0x0100)
    }

    @Test func writeSimplePayloadBothOrders() throws {
        let id = inline16([UInt8](repeating: 0x5a, count: 16))
        var s = ArraySink()
        try SimplePayload.write(header: .init(protocolAndVersion: 0x10, countryCode: 826, stateCode: 1),
                                contactIdentifier: id, extendedData: Span(), to: &s)
        #expect(s.bytes == Self.phonePayload)
        var le = ArraySink()
        try SimplePayload.write(header: .init(protocolAndVersion: 0x11, countryCode: 826, stateCode: 1),
                                contactIdentifier: id, extendedData: Span(), order: .littleEndian, to: &le)
        #expect(Array(le.bytes[0..<5]) == hex("113a030100"))
    }

    @Test func simplePayloadWithExtendedDataRoundTrips() throws {
        var ext = ArraySink()
        try ExtendedDataWriter.append(code: ExtendedDataCode.phoneModel, text: "Pixel 7", to: &ext)
        ExtendedDataWriter.appendDBm(code: ExtendedDataCode.yourLastRSSI, dBm: -66, to: &ext)
        ExtendedDataWriter.appendDBm(code: ExtendedDataCode.txPower, dBm: 8, to: &ext)
        ExtendedDataWriter.appendContactEvent(start: true, unixSeconds: 1_608_062_077, to: &ext)
        #expect(ext.bytes == hex("4207") + Array("Pixel 7".utf8) + hex("4001be 410108 20045fd9147d"))
        let payload = Self.phonePayload + ext.bytes
        let p = try parseSimple(payload)
        #expect(p.ext == ext.bytes)
        // Iterate the sections with typed accessors.
        let summary: [String] = try p.ext.withUnsafeBufferPointer { buf throws(DecodeError) in
            var r = ExtendedDataReader(Span(_unsafeElements: buf))
            var out: [String] = []
            while let s = try r.next() {
                let code = s.code, dBm = s.dBm, t = s.unixSeconds, text = s.isText
                out.append("\(code):\(text ? "text" : "")\(dBm.map(String.init) ?? "")\(t.map(String.init) ?? "")")
            }
            return out
        }
        #expect(summary == ["66:text", "64:-66", "65:8", "32:1608062077"])
    }

    @Test func simplePayloadErrors() {
        #expect(throws: DecodeError.unexpectedCode(field: "Simple payload protocol/version", value: 0x18)) {
            try parseSimple(hex("18033a0001") + [UInt8](repeating: 0, count: 16))
        }
        #expect(throws: DecodeError.truncated(needed: 21, available: 20)) { try parseSimple(Array(Self.phonePayload.dropLast())) }
        #expect(throws: DecodeError.truncated(needed: 3, available: 1)) { try parseSimple([0x10]) }
        // Extended data section claiming more bytes than remain.
        #expect(throws: DecodeError.badLength(field: "extended data section", declared: 5, limit: 2)) {
            try parseSimple(Self.phonePayload + hex("1005 4142"))
        }
        // Too much extended data (489 is the maximum).
        var long: [UInt8] = []
        for _ in 0..<2 { long += [0x80, 255] + [UInt8](repeating: 7, count: 255) }
        #expect(throws: DecodeError.badLength(field: "Simple payload extended data", declared: 514, limit: 489)) {
            try parseSimple(Self.phonePayload + long)
        }
    }

    @Test func extendedDataValidation() {
        func check(_ b: [UInt8]) throws(DecodeError) {
            try b.withUnsafeBufferPointer { buf throws(DecodeError) in try ExtendedDataReader.validate(Span(_unsafeElements: buf)) }
        }
        #expect(throws: Never.self) { try check(hex("8003010203 1003") + Array("Joe".utf8)) }
        #expect(throws: Never.self) { try check([0x13, 32] + Array("https://someurl.com/venue/123456".utf8)) }
        #expect(throws: DecodeError.badLength(field: "extended data section", declared: 0, limit: 255)) { try check(hex("1000")) }
        #expect(throws: DecodeError.badLength(field: "contact event time", declared: 3, limit: 4)) { try check(hex("2103010203")) }
        #expect(throws: DecodeError.badLength(field: "extended data dBm", declared: 2, limit: 1)) { try check(hex("4102ffff")) }
        #expect(throws: DecodeError.invalidValue(field: "location URL scheme", value: 0x13)) {
            try check([0x13, 18] + Array("http://example.com".utf8))
        }
        #expect(throws: DecodeError.invalidValue(field: "UTF-8 text", value: 1)) { try check(hex("1003 41c041")) } // overlong lead
        #expect(throws: DecodeError.invalidValue(field: "UTF-8 text", value: 0)) { try check(hex("1103 eda080")) } // surrogate
        #expect(throws: DecodeError.truncated(needed: 2, available: 1)) { try check(hex("10")) }
        #expect(throws: DecodeError.self) {
            var s = ArraySink()
            try ExtendedDataWriter.append(code: ExtendedDataCode.locationURL, text: "ftp://x", to: &s)
        }
    }

    // Beacon payload specification, Figure 2: "Joe's Gourmet Pizza", "Window Seating", a URL.
    @Test func venueBeaconExampleFromSpecification() throws {
        var ext = ArraySink()
        try ExtendedDataWriter.append(code: ExtendedDataCode.premisesName, text: "Joe's Gourmet Pizza", to: &ext)
        try ExtendedDataWriter.append(code: ExtendedDataCode.locationName, text: "Window Seating", to: &ext)
        try ExtendedDataWriter.append(code: ExtendedDataCode.locationURL, text: "https://someurl.com/venue/123456", to: &ext)
        #expect(ext.bytes.count == 71) // the figure's "Extension Data 71 bytes"
        var out = ArraySink()
        try ext.bytes.withUnsafeBufferPointer { b throws(DecodeError) in
            try VenueBeaconPayload.write(header: .init(protocolAndVersion: 0x30, countryCode: 826, stateCode: 1),
                                         locationCode: 123_456, extendedData: Span(_unsafeElements: b), to: &out)
        }
        #expect(Array(out.bytes[0..<9]) == hex("30 033a 0001 0001e240"))
        let (header, code, extCount) = try out.bytes.withUnsafeBufferPointer { buf throws(DecodeError) in
            let p = try VenueBeaconPayload(parsing: Span(_unsafeElements: buf))
            return (p.header, p.locationCode, p.extendedData.count)
        }
        #expect(header.countryCode == 826 && code == 123_456 && extCount == 71)
        #expect(throws: DecodeError.unexpectedCode(field: "beacon payload protocol/version", value: 0x10)) {
            try Self.phonePayload.withUnsafeBufferPointer { b throws(DecodeError) in _ = try VenueBeaconPayload(parsing: Span(_unsafeElements: b)).locationCode }
        }
    }
}
