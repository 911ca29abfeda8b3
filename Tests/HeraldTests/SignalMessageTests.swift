import Testing
import BluetoothHost
@testable import Herald

/// Signal characteristic messages. Hex literals are the ATT values written in
/// shared/captures/herald-writer-signal-messages.btsnoop (a Bumble central writing to a Herald phone).
@Suite struct SignalMessageTests {
    static let payload2 = hex("10033a0002") + [UInt8](repeating: 0xee, count: 16)
    static let shared3 = hex("10033a0003") + [UInt8](repeating: 0x11, count: 16)
    static let shared4 = hex("10033a0004") + [UInt8](repeating: 0x22, count: 16)

    // Write Requests 1 and 2 on handle 0x0012: the payload message in two writes.
    static let capturedPayloadWrites = [
        hex("01150010033a0002eeeeeeeeeeeeeeeeeeeeeeee"),
        hex("eeeeeeee"),
    ]
    static let capturedRSSIWrite = hex("02d6ff")
    // Prepare Write Request values at offsets 0, 18, 36 (a long write of the sharing message).
    static let capturedSharingPrepareWrites = [
        hex("03d6ff2a0010033a00031111111111111111"),
        hex("111111111111111110033a00042222222222"),
        hex("2222222222222222222222"),
    ]
    static let capturedImmediateSend = hex("040300cafe01")

    func feed(_ r: inout SignalReassembler<600>, _ b: [UInt8]) -> SignalWriteOutcome {
        b.withUnsafeBufferPointer { r.receive(Span(_unsafeElements: $0)) }
    }

    func parse(_ b: [UInt8]) throws(DecodeError) -> (SignalMessageKind, Int16, [UInt8]) {
        try b.withUnsafeBufferPointer { buf throws(DecodeError) in
            let m = try SignalMessage(parsing: Span(_unsafeElements: buf))
            let kind = m.kind, rssi = m.rssi
            var data: [UInt8] = []
            for i in m.data.indices { data.append(m.data[i]) }
            return (kind, rssi, data)
        }
    }

    func messageBytes(_ r: SignalReassembler<600>) -> [UInt8] {
        let s = r.message
        var out: [UInt8] = []
        for i in s.indices { out.append(s[i]) }
        return out
    }

    @Test func capturedPayloadWriteInTwoFragments() throws {
        var r = SignalReassembler<600>()
        #expect(feed(&r, Self.capturedPayloadWrites[0]) == .incomplete)
        #expect(r.pendingCount == 20)
        #expect(feed(&r, Self.capturedPayloadWrites[1]) == .complete(.payload))
        let (kind, _, data) = try parse(messageBytes(r))
        #expect(kind == .payload)
        #expect(data == Self.payload2)
    }

    @Test func capturedRSSIWrite() throws {
        var r = SignalReassembler<600>()
        #expect(feed(&r, Self.capturedRSSIWrite) == .complete(.rssi))
        let (kind, rssi, data) = try parse(Self.capturedRSSIWrite)
        #expect(kind == .rssi && rssi == -42 && data.isEmpty)
    }

    @Test func capturedPayloadSharingWhole() throws {
        let whole = Self.capturedSharingPrepareWrites.flatMap { $0 }
        #expect(whole == hex("03d6ff2a00") + Self.shared3 + Self.shared4)
        var r = SignalReassembler<600>()
        #expect(feed(&r, whole) == .complete(.payloadSharing))
        let (kind, rssi, data) = try parse(whole)
        #expect(kind == .payloadSharing && rssi == -42)
        // Split into the two shared payloads.
        let payloads: [[UInt8]] = try data.withUnsafeBufferPointer { buf throws(DecodeError) in
            var it = SharedPayloadIterator(Span(_unsafeElements: buf))
            try it.validate()
            var out: [[UInt8]] = []
            while let p = try it.next() { var a: [UInt8] = []; for i in p.indices { a.append(p[i]) }; out.append(a) }
            return out
        }
        #expect(payloads == [Self.shared3, Self.shared4])
    }

    @Test func capturedImmediateSend() throws {
        var r = SignalReassembler<600>()
        #expect(feed(&r, Self.capturedImmediateSend) == .complete(.immediateSend))
        let (kind, _, data) = try parse(Self.capturedImmediateSend)
        #expect(kind == .immediateSend && data == hex("cafe01"))
    }

    @Test func everyMessageIn20ByteFragmentsReassembles() throws {
        let messages = [
            Self.capturedPayloadWrites.flatMap { $0 }, Self.capturedRSSIWrite,
            Self.capturedSharingPrepareWrites.flatMap { $0 }, Self.capturedImmediateSend,
        ]
        var r = SignalReassembler<600>()
        for m in messages {
            let chunks = stride(from: 0, to: m.count, by: 20).map { Array(m[$0..<min($0 + 20, m.count)]) }
            for (i, c) in chunks.enumerated() {
                let outcome = feed(&r, c)
                if i < chunks.count - 1 { #expect(outcome == .incomplete) } else {
                    guard case .complete = outcome else { Issue.record("not complete: \(outcome)"); continue }
                }
            }
            #expect(messageBytes(r) == m)
        }
    }

    @Test func emptyWriteIsKeepAwakeAndKeepsAPartialMessage() throws {
        var r = SignalReassembler<600>()
        #expect(feed(&r, []) == .keepAwake)
        #expect(feed(&r, Self.capturedPayloadWrites[0]) == .incomplete)
        #expect(feed(&r, []) == .keepAwake)
        #expect(feed(&r, Self.capturedPayloadWrites[1]) == .complete(.payload))
        let (kind, _, _) = try parse([])
        #expect(kind == .keepAwake)
    }

    @Test func malformedMessagesAreRejectedWithInvalidLengthAndClearTheBuffer() {
        var r = SignalReassembler<600>()
        let bad: [[UInt8]] = [
            hex("05"),                 // unknown type
            hex("00aa"),               // type 0 is not a message
            hex("02d6ff00"),           // RSSI with a trailing byte
            hex("01ffff"),             // negative length
            hex("010200aabbcc"),       // more data than declared
            hex("047f02") + [UInt8](repeating: 0, count: 17), // 639 bytes declared: over capacity
            hex("03d6ff0500") + hex("010203040506"),          // sharing list longer than declared
        ]
        for b in bad {
            #expect(feed(&r, b) == .rejected(attError: 0x0D), "\(hexString(b))")
            #expect(r.pendingCount == 0)
        }
        // A fragment that overshoots the declared length also fails, after a good first fragment.
        #expect(feed(&r, hex("010300aa")) == .incomplete)
        #expect(feed(&r, hex("bbccdd")) == .rejected(attError: 0x0D))
        // And the buffer is usable again.
        #expect(feed(&r, Self.capturedRSSIWrite) == .complete(.rssi))
    }

    @Test func parserTypedErrors() {
        #expect(throws: DecodeError.unexpectedCode(field: "signal message type", value: 9)) { try parse(hex("09")) }
        #expect(throws: DecodeError.truncated(needed: 3, available: 2)) { try parse(hex("02d6")) }
        #expect(throws: DecodeError.trailingBytes(count: 1)) { try parse(hex("02d6ff01")) }
        #expect(throws: DecodeError.truncated(needed: 5, available: 4)) { try parse(hex("010200aa")) }
        #expect(throws: DecodeError.trailingBytes(count: 1)) { try parse(hex("010100aabb")) }
        #expect(throws: DecodeError.invalidValue(field: "signal message length", value: -2)) { try parse(hex("04feff")) }
        #expect(throws: DecodeError.truncated(needed: 5, available: 4)) { try parse(hex("03d6ff01")) }
    }

    // MARK: encoder (central role)

    func encode(_ body: (inout ArraySink) throws(DecodeError) -> Void) throws -> [UInt8] {
        var s = ArraySink()
        try body(&s)
        return s.bytes
    }

    func fragments(_ m: [UInt8], size: Int = 20) -> [[UInt8]] {
        m.withUnsafeBufferPointer { buf in
            var f = SignalFragmenter(Span(_unsafeElements: buf), fragmentSize: size)
            var out: [[UInt8]] = []
            while let c = f.next() { var a: [UInt8] = []; for i in c.indices { a.append(c[i]) }; out.append(a) }
            return out
        }
    }

    @Test func encoderReproducesCapturedWrites() throws {
        let payload = try encode { s throws(DecodeError) in
            try Self.payload2.withUnsafeBufferPointer { b throws(DecodeError) in try SignalMessageEncoder.writePayload(Span(_unsafeElements: b), to: &s) }
        }
        #expect(fragments(payload) == Self.capturedPayloadWrites)

        let rssi = try encode { s in SignalMessageEncoder.writeRSSI(-42, to: &s) }
        #expect(rssi == Self.capturedRSSIWrite)

        let list = Self.shared3 + Self.shared4
        let sharing = try encode { s throws(DecodeError) in
            try list.withUnsafeBufferPointer { b throws(DecodeError) in try SignalMessageEncoder.writePayloadSharing(rssi: -42, payloads: Span(_unsafeElements: b), to: &s) }
        }
        #expect(sharing == Self.capturedSharingPrepareWrites.flatMap { $0 })
        // Built in its buffer (the central's way: header, payloads appended, length filled in), the
        // same bytes, after whatever the buffer already held.
        var inPlace = FixedBytes<64>()
        inPlace.append(0xEE)
        let start = SignalMessageEncoder.startPayloadSharing(rssi: -42, in: &inPlace)
        inPlace.append(contentsOf: list.span)
        try SignalMessageEncoder.finishPayloadSharing(in: &inPlace, start: start)
        #expect(start == 1)
        #expect(Array(array(inPlace).dropFirst()) == sharing)
        #expect(fragments(sharing, size: 18) == Self.capturedSharingPrepareWrites)
        #expect(fragments(sharing).map(\.count) == [20, 20, 7])

        let immediate = try encode { s throws(DecodeError) in
            try hex("cafe01").withUnsafeBufferPointer { b throws(DecodeError) in try SignalMessageEncoder.writeImmediateSend(Span(_unsafeElements: b), to: &s) }
        }
        #expect(immediate == Self.capturedImmediateSend)
        #expect(fragments(immediate) == [Self.capturedImmediateSend])
    }

    @Test func encoderRefusesOversizeData() {
        let big = [UInt8](repeating: 1, count: 40_000)
        #expect(throws: DecodeError.self) {
            var s = ArraySink()
            try big.withUnsafeBufferPointer { b throws(DecodeError) in try SignalMessageEncoder.writeImmediateSend(Span(_unsafeElements: b), to: &s) }
        }
    }

    @Test func sharedPayloadTailIsAnError() {
        let list = Self.shared3 + [0x10, 0x03]
        #expect(throws: DecodeError.truncated(needed: 42, available: 23)) {
            try list.withUnsafeBufferPointer { buf throws(DecodeError) in
                var it = SharedPayloadIterator(Span(_unsafeElements: buf))
                while try it.next() != nil {}
            }
        }
        #expect(throws: DecodeError.self) {
            try list.withUnsafeBufferPointer { buf throws(DecodeError) in try SharedPayloadIterator(Span(_unsafeElements: buf)).validate() }
        }
    }
}
