import Testing
@testable import BluetoothHost

@Suite struct BytesTests {
    @Test func readerReadsLittleEndianAndStopsAtEnd() throws {
        let bytes: [UInt8] = [0x01, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12]
        var r = ByteReader(bytes.span)
        #expect(try r.u8() == 0x01)
        #expect(try r.u16() == 0x1234)
        #expect(try r.u32() == 0x1234_5678)
        let atEnd = r.isAtEnd
        #expect(atEnd)
        #expect(throws: DecodeError.truncated(needed: 8, available: 7)) { try r.u8() }
    }

    /// A fixed-size format checks its length once, up front, naming the whole length.
    @Test func readerOverAFixedSizeFormat() throws {
        let bytes: [UInt8] = [0x01, 0x34, 0x12]
        var r = try ByteReader(bytes.span, exactly: 3)
        #expect(try r.u8() == 0x01 && r.u16() == 0x1234)
        try r.expectEnd()
        #expect(throws: DecodeError.truncated(needed: 4, available: 3)) { _ = try ByteReader(bytes.span, exactly: 4) }
        #expect(throws: DecodeError.trailingBytes(count: 1)) { _ = try ByteReader(bytes.span, exactly: 2) }
        var v = try ByteReader(bytes.span, atLeast: 1)
        #expect(try v.u8() == 0x01 && v.remaining == 2)
        #expect(throws: DecodeError.truncated(needed: 4, available: 3)) { _ = try ByteReader(bytes.span, atLeast: 4) }
        // A short ATT Error Response is refused before any field is read.
        #expect(throws: DecodeError.truncated(needed: 5, available: 4)) { _ = try ATTErrorResponse([0x01, 0x0A, 0x03, 0x00].span) }
    }

    @Test func readerBigEndianAndSubspans() throws {
        let bytes: [UInt8] = [0x12, 0x34, 0xAA, 0xBB, 0xCC]
        var r = ByteReader(bytes.span)
        #expect(try r.u16BigEndian() == 0x1234)
        let sub = try r.bytes(2)
        let (n, first, second) = (sub.count, sub[0], sub[1])
        #expect(n == 2 && first == 0xAA && second == 0xBB)
        #expect(throws: DecodeError.trailingBytes(count: 1)) { try r.expectEnd() }
        #expect(throws: DecodeError.truncated(needed: 6, available: 5)) { _ = try r.bytes(2) }
    }

    @Test func sixtyFourBitRoundTrip() throws {
        var out = FixedBytes<8>()
        out.append(u64: 0x0102_0304_0506_0708)
        #expect(!out.overflowed)
        // Little-endian on the wire (Core 5.4 Vol 4 Part E 5.2), each side checked on its own so a
        // byte-order slip in both cannot cancel out.
        #expect((0..<8).map { out[$0] } == [0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01])
        var r = ByteReader(out.span)
        #expect(try r.u64() == 0x0102_0304_0506_0708)
        let wire: [UInt8] = [0xEF, 0xCD, 0xAB, 0x89, 0x67, 0x45, 0x23, 0xF1]
        var w = ByteReader(wire.span)
        #expect(try w.u64() == 0xF123_4567_89AB_CDEF)
    }

    @Test func fixedBytesOverflowIsFlaggedNotFatal() {
        var b = FixedBytes<3>()
        for i in 0..<5 { b.append(UInt8(i)) }
        #expect(b.count == 3)
        #expect(b.overflowed)
        b.removeFirst(1)
        #expect(b.count == 2 && b[0] == 1 && b[1] == 2)
        // A 16-bit field keeps what fits, like single octets: both, then the low one, then none.
        var w = FixedBytes<5>()
        w.append(u16: 0x1234)
        w.append(u16: 0x5678)
        #expect(w.count == 4 && !w.overflowed && w[0] == 0x34 && w[3] == 0x56)
        w.append(u16: 0x9ABC)
        #expect(w.count == 5 && w.overflowed && w[4] == 0xBC)
        w.append(u16: 0xDEF0)
        #expect(w.count == 5 && w.freeCapacity == 0)
        w.append(contentsOf: [1, 2].span)
        #expect(w.count == 5)
    }

    @Test func widening() {
        #expect(Int64(widening: -5) == -5)
        #expect(Int64(widening: Int.max) == Int64(Int.max))
        #expect(UInt64(widening: UInt32.max) == 0xFFFF_FFFF)
        #expect(Int(clamping64: Int64.max) == Int.max)
    }

    @Test func uuidTextAndAliases() throws {
        let herald = try #require(BluetoothUUID("428132af-4746-42d3-801e-4572d65bfd9b"))
        #expect(herald.bytes[15] == 0x42 && herald.bytes[0] == 0x9B)
        #expect(herald.uuid16 == nil)
        let gap = BluetoothUUID(uuid16: 0x1800)
        let gapLong = try #require(BluetoothUUID("00001800-0000-1000-8000-00805f9b34fb"))
        #expect(gap == gapLong)
        #expect(gapLong.uuid16 == 0x1800)
        #expect(BluetoothUUID("not-a-uuid") == nil)
        let wire: [UInt8] = [0xF6, 0xFC]
        #expect(try BluetoothUUID(wire: wire.span).uuid16 == 0xFCF6)
        #expect(throws: DecodeError.self) { try BluetoothUUID(wire: [UInt8](repeating: 0, count: 3).span) }
    }

    @Test func addressDisplayAndSubtype() {
        let a = BDAddress(displayOrder: 0xC1, 0x22, 0x33, 0x44, 0x55, 0x66)
        #expect(a.bytes[0] == 0x66 && a.bytes[5] == 0xC1)
        #expect(a.randomSubtype == .staticAddress)
        var text = FixedBytes<17>()
        a.writeDisplay(to: &text)
        #expect(String(decoding: text.span.withUnsafeBufferPointer { Array($0) }, as: UTF8.self) == "C1:22:33:44:55:66")
    }
}
