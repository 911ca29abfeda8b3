import Testing
@testable import BluetoothHost
@testable import Herald

/// Writes to the signal characteristic through the real ATT server: the values are those a Bumble
/// central wrote in shared/captures/herald-writer-signal-messages.btsnoop (see SignalMessageTests).
@Suite struct PeripheralSignalTests {
    typealias Captured = SignalMessageTests

    static let payloadMessage = Captured.capturedPayloadWrites[0] + Captured.capturedPayloadWrites[1]
    static let sharingMessage = Captured.capturedSharingPrepareWrites.reduce([], +)
    static let wholeMessages = [payloadMessage, Captured.capturedRSSIWrite, sharingMessage, Captured.capturedImmediateSend]
    static let expectedEvents = [
        "payload 64 \(hexString(Captured.payload2))",
        "rssi 64 -42",
        "share 64 -42 \(hexString(Captured.shared3)),\(hexString(Captured.shared4))",
        "immediate 64 cafe01",
    ]

    func harness() throws -> PeripheralHarness<FixedPayloadSource<32>> {
        var h = try PeripheralHarness(source: try FixedPayloadSource<32>(bytes: hex("10033a0001").span))
        h.connect(0x0040)
        h.connect(0x0041)
        return h
    }

    var writeResponse: [UInt8] { [0x13] }
    func invalidLength(_ h: PeripheralHarness<FixedPayloadSource<32>>) -> [UInt8] {
        [0x01, 0x12] + h.le(h.handles.signal.value) + [0x0D]
    }

    @Test func capturedWritesAsSentBecomeEvents() throws {
        var h = try harness()
        // As captured: the payload in two Write Requests, RSSI whole, sharing as a long write
        // (Prepare Write at offsets 0, 18, 36 then Execute), immediate send whole.
        #expect(h.writeSignal(Captured.capturedPayloadWrites[0]) == writeResponse)
        #expect(h.events.isEmpty)
        #expect(h.app.peripheral.pendingSignalBytes(link: 0x0040) == 20)
        #expect(h.writeSignal(Captured.capturedPayloadWrites[1]) == writeResponse)
        #expect(h.writeSignal(Captured.capturedRSSIWrite) == writeResponse)
        var offset: UInt16 = 0
        for part in Captured.capturedSharingPrepareWrites {
            let pdu = [0x16] + h.le(h.handles.signal.value) + h.le(offset) + part
            #expect(h.send(pdu) == [0x17] + Array(pdu.dropFirst()))
            offset += UInt16(part.count)
        }
        #expect(h.send([0x18, 0x01]) == [0x19])
        #expect(h.writeSignal(Captured.capturedImmediateSend) == writeResponse)
        #expect(h.events == Self.expectedEvents)
    }

    @Test func wholeMessagesInSingleWrites() throws {
        var h = try harness()
        _ = h.send(hex("02 f700"))  // MTU 247 so each message fits one Write Request
        for m in Self.wholeMessages { #expect(h.writeSignal(m) == writeResponse) }
        #expect(h.events == Self.expectedEvents)
        #expect(h.app.peripheral.pendingSignalBytes(link: 0x0040) == 0)
    }

    @Test func everyMessageIn20ByteFragments() throws {
        var h = try harness()
        for m in Self.wholeMessages {
            var fragments = 0
            for start in stride(from: 0, to: m.count, by: 20) {
                #expect(h.writeSignal(Array(m[start..<min(start + 20, m.count)])) == writeResponse)
                fragments += 1
            }
            #expect(fragments == (m.count + 19) / 20)
        }
        #expect(h.events == Self.expectedEvents)
    }

    @Test func linksReassembleIndependently() throws {
        var h = try harness()
        let a = Self.payloadMessage, b = Self.sharingMessage
        // Interleave: link 0's payload message and link 1's sharing message, fragment by fragment.
        #expect(h.writeSignal(Array(a[0..<20]), link: 0x0040) == writeResponse)
        #expect(h.writeSignal(Array(b[0..<20]), link: 0x0041) == writeResponse)
        #expect(h.writeSignal(Array(b[20..<40]), link: 0x0041) == writeResponse)
        #expect(h.writeSignal(Array(a[20...]), link: 0x0040) == writeResponse)
        #expect(h.writeSignal(Array(b[40...]), link: 0x0041) == writeResponse)
        #expect(h.events == [
            "payload 64 \(hexString(Captured.payload2))",
            "share 65 -42 \(hexString(Captured.shared3)),\(hexString(Captured.shared4))",
        ])
    }

    @Test func emptyWriteKeepsAwakeAndLeavesAPartialMessageAlone() throws {
        var h = try harness()
        #expect(h.writeSignal(Array(Self.payloadMessage[0..<20])) == writeResponse)
        #expect(h.writeSignal([]) == writeResponse)
        #expect(h.writeSignal(Array(Self.payloadMessage[20...])) == writeResponse)
        #expect(h.events == ["awake 64", "payload 64 \(hexString(Captured.payload2))"])
    }

    @Test func malformedWritesGetInvalidAttributeValueLengthAndClearTheBuffer() throws {
        var h = try harness()
        let bad: [[UInt8]] = [
            hex("05"),                   // unknown type
            hex("00aa"),                 // type 0 is not a message
            hex("02d6ff00"),             // RSSI with a trailing byte
            hex("01ffff"),               // negative length
            hex("010200aabbcc"),         // more data than declared
            hex("04ff7f"),               // 32767 bytes declared: more than the buffer can ever hold
            hex("03d6ff0500") + hex("0102030405"), // sharing list that is not whole 21-byte payloads
        ]
        for b in bad {
            #expect(h.writeSignal(b) == invalidLength(h), "\(hexString(b))")
            #expect(h.app.peripheral.pendingSignalBytes(link: 0x0040) == 0)
        }
        #expect(h.events == bad.map { "reject 64 \(hexString($0))" })
        // A partial message followed by a fragment that overshoots its declared length.
        #expect(h.writeSignal(hex("010300aa")) == writeResponse)
        #expect(h.writeSignal(hex("bbccdd")) == invalidLength(h))
        // The buffer was cleared: the next message starts fresh and is delivered.
        #expect(h.writeSignal(Captured.capturedRSSIWrite) == writeResponse)
        #expect(h.events.last == "rssi 64 -42")
    }

    @Test func disconnectDropsAPartialMessage() throws {
        var h = try harness()
        #expect(h.writeSignal(Array(Self.payloadMessage[0..<20])) == writeResponse)
        h.disconnect(0x0040)
        h.connect(0x0042)
        #expect(h.app.peripheral.pendingSignalBytes(link: 0x0040) == 0)
        #expect(h.app.peripheral.pendingSignalBytes(link: 0x0042) == 0)
        // The old tail alone is now an unknown message type (0xee).
        #expect(h.writeSignal(Array(Self.payloadMessage[20...]), link: 0x0042) == invalidLength(h))
        #expect(h.app.peripheral.link(handle: 0x0042) != nil && h.app.peripheral.link(handle: 0x0040) == nil)
    }

    @Test func theOtherCharacteristicRefusesTheWrongOperation() throws {
        var h = try harness()
        #expect(h.send([0x12] + h.le(h.handles.payload.value) + [0x01]) == [0x01, 0x12] + h.le(h.handles.payload.value) + [0x03])
        #expect(h.send([0x0A] + h.le(h.handles.signal.value)) == [0x01, 0x0A] + h.le(h.handles.signal.value) + [0x02])
        #expect(h.events.isEmpty)
    }
}
