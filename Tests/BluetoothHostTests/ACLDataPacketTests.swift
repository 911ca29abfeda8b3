import Testing
@testable import BluetoothHost

/// Hex text ("02 01 20 …", spaces optional) to bytes, for packets copied from the btsnoop captures.
func aclHex(_ text: String) -> [UInt8] {
    let digits = text.filter { !$0.isWhitespace }
    precondition(digits.count % 2 == 0)
    var out: [UInt8] = []
    var i = digits.startIndex
    while i < digits.endIndex {
        let j = digits.index(i, offsetBy: 2)
        out.append(UInt8(digits[i..<j], radix: 16)!)
        i = j
    }
    return out
}

/// A growable sink for tests (the core never allocates; tests may).
struct ACLTestSink: ByteSink {
    var bytes: [UInt8] = []
    mutating func append(_ byte: UInt8) { bytes.append(byte) }

    /// Splits an H4 stream of ACL packets into packets (indicator included).
    func h4Packets() -> [[UInt8]] {
        var out: [[UInt8]] = []
        var i = 0
        while i + 5 <= bytes.count {
            precondition(bytes[i] == 0x02)
            let length = Int(bytes[i + 3]) | Int(bytes[i + 4]) << 8
            out.append(Array(bytes[i..<(i + 5 + length)]))
            i += 5 + length
        }
        precondition(i == bytes.count, "trailing bytes in H4 stream")
        return out
    }
}

// Real packets from ../shared/captures (beside the repository) (H4 indicator first).
enum CapturedACL {
    /// herald-phone-peripheral.btsnoop frame 39: received Exchange MTU Request (MTU 247), PB 0b10.
    static let mtuRequest = aclHex("02 01 20 07 00 03 00 04 00 02 f7 00")
    /// herald-phone-peripheral.btsnoop frames 52–53: our Read By Type Response (44-byte ATT PDU)
    /// sent by Bumble as two packets for a 27-byte controller: PB 0b00 then 0b01.
    static let readByTypeFirst = aclHex("""
        02 01 00 1b 00 2c 00 04 00 09 15 0f 00 02 10 00 e7 33 89 8f e3 43 21 a1 29 48 05 8f f8 c0 98 3e
        """)
    static let readByTypeContinuation = aclHex("""
        02 01 10 15 00 11 00 08 12 00 11 1a 82 80 9a e0 24 83 7a 43 2e 09 13 b8 17 f6
        """)
    /// herald-central-reads-phone.btsnoop frame 54: the same PDU as the central received it, whole.
    static let readByTypeWhole = aclHex("""
        02 01 20 30 00 2c 00 04 00 09 15 0f 00 02 10 00 e7 33 89 8f e3 43 21 a1 29 48 05 8f f8 c0 98 3e
        11 00 08 12 00 11 1a 82 80 9a e0 24 83 7a 43 2e 09 13 b8 17 f6
        """)
    /// The 44-byte ATT payload of the packets above.
    static var readByTypePayload: [UInt8] { Array(readByTypeWhole[9...]) }
}

@Suite struct ACLDataPacketTests {
    @Test func parsesCapturedStartPacket() throws {
        let bytes = CapturedACL.mtuRequest
        let packet = try HCIACLDataPacket(parsing: bytes.span.extracting(1...))
        let (handle, pb, bc, count) = (packet.handle, packet.boundary, packet.broadcast, packet.data.count)
        #expect(handle == 0x0001)
        #expect(pb == .firstFlushable)
        #expect(bc == .pointToPoint)
        #expect(count == 7)
        let frame = try L2CAPBasicFrame(parsing: packet.data)
        let (channel, first, payloadCount) = (frame.channel, frame.payload[0], frame.payload.count)
        #expect(channel == .att && first == 0x02 && payloadCount == 3)
    }

    @Test func parsesContinuationFlagsAndHandleBits() throws {
        let bytes = CapturedACL.readByTypeContinuation
        let packet = try HCIACLDataPacket(parsing: bytes.span.extracting(1...))
        let (handle, pb, count) = (packet.handle, packet.boundary, packet.data.count)
        #expect(handle == 1 && pb == .continuing && count == 0x15)

        // All flag bits set: handle 0xEFF, PB 0b11, BC 0b11.
        let odd: [UInt8] = [0xFF, 0xFE, 0x01, 0x00, 0xAA]
        let p2 = try HCIACLDataPacket(parsing: odd.span)
        let (h2, pb2, bc2) = (p2.handle, p2.boundary, p2.broadcast)
        #expect(h2 == 0x0EFF && pb2 == .complete && bc2 == .reserved3)
        #expect(pb2.isStart)
    }

    @Test func rejectsWrongDeclaredLength() {
        let short: [UInt8] = [0x01, 0x20, 0x05, 0x00, 0x01, 0x02]
        #expect(throws: DecodeError.badLength(field: "ACL data total length", declared: 5, limit: 2)) {
            _ = try HCIACLDataPacket(parsing: short.span)
        }
        let long: [UInt8] = [0x01, 0x20, 0x01, 0x00, 0x01, 0x02]
        #expect(throws: DecodeError.badLength(field: "ACL data total length", declared: 1, limit: 2)) {
            _ = try HCIACLDataPacket(parsing: long.span)
        }
        let truncated: [UInt8] = [0x01, 0x20, 0x01]
        #expect(throws: DecodeError.truncated(needed: 4, available: 3)) {
            _ = try HCIACLDataPacket(parsing: truncated.span)
        }
    }

    @Test func headerWriterMatchesCapture() {
        var sink = ACLTestSink()
        HCIACLDataHeader(handle: 0x0001, boundary: .continuing, dataLength: 0x15).writeH4(to: &sink)
        #expect(sink.bytes == Array(CapturedACL.readByTypeContinuation[0..<5]))
        var sink2 = ACLTestSink()
        HCIACLDataHeader(handle: 0x0EFF, boundary: .firstFlushable, broadcast: .brEdrBroadcast, dataLength: 0x1234)
            .write(to: &sink2)
        #expect(sink2.bytes == [0xFF, 0x6E, 0x34, 0x12])
    }

    @Test func basicFrameLengthChecked() {
        let bad: [UInt8] = [0x05, 0x00, 0x04, 0x00, 0x01]
        #expect(throws: DecodeError.badLength(field: "L2CAP length", declared: 5, limit: 1)) {
            _ = try L2CAPBasicFrame(parsing: bad.span)
        }
        let payload: [UInt8] = [0x0A, 0x0B]
        var sink = ACLTestSink()
        L2CAPBasicFrame(channel: .smp, payload: payload.span).write(to: &sink)
        #expect(sink.bytes == [0x02, 0x00, 0x06, 0x00, 0x0A, 0x0B])
    }
}

/// The bytes of a `FixedBytes` as an array, for `#expect` (which cannot take a Span).
func aclArray<let N: Int>(_ b: FixedBytes<N>) -> [UInt8] { (0..<b.count).map { b[$0] } }
