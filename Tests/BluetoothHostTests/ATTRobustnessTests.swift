import Testing
@testable import BluetoothHost

/// Malformed and random input never crashes the codecs or the server, and the server never answers
/// with more than ATT_MTU octets or more than one PDU.
@Suite struct ATTRobustnessTests {
    /// Every ATT PDU in the Herald captures, each cut at every length, through every decoder.
    @Test func everyPrefixOfCapturedPDUsDecodesOrThrows() {
        let captured = [
            "02f700", "030502", "100100ffff0028", "110601000500001806000d000118",
            "11140e0012009bfd5bd672451e80d3424647af328142", "011013000a", "080e0012000328",
            "09150f00021000e733898fe34321a12948058ff8c0983e1100081200111a82809ae024837a432e0913b817f6",
            "0a1000", "0b10033a00015a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a", "161200000003d6ff2a0010033a00031111111111111111",
            "1801", "19", "13", "121200040300cafe01",
        ].map(attHex)
        typealias Parse = (Span<UInt8>) throws(DecodeError) -> Void
        let decoders: [(String, Parse)] = [
            ("ATTErrorResponse", { s throws(DecodeError) in _ = try ATTErrorResponse(s) }),
            ("ATTExchangeMTURequest", { s throws(DecodeError) in _ = try ATTExchangeMTURequest(s) }),
            ("ATTReadByGroupTypeRequest", { s throws(DecodeError) in _ = try ATTReadByGroupTypeRequest(s) }),
            ("ATTReadByGroupTypeResponse", { s throws(DecodeError) in var i = try ATTReadByGroupTypeResponse(s).makeIterator(); while i.next() != nil {} }),
            ("ATTReadByTypeResponse", { s throws(DecodeError) in var i = try ATTReadByTypeResponse(s).makeIterator(); while i.next() != nil {} }),
            ("ATTFindInformationResponse", { s throws(DecodeError) in var i = try ATTFindInformationResponse(s).makeIterator(); while i.next() != nil {} }),
            ("ATTFindByTypeValueResponse", { s throws(DecodeError) in var i = try ATTFindByTypeValueResponse(s).makeIterator(); while i.next() != nil {} }),
            ("ATTReadMultipleVariableResponse", { s throws(DecodeError) in var i = try ATTReadMultipleVariableResponse(s).makeIterator(); while i.next() != nil {} }),
            ("ATTMultipleHandleValueNotification", { s throws(DecodeError) in var i = try ATTMultipleHandleValueNotification(s).makeIterator(); while i.next() != nil {} }),
            ("ATTReadByTypeRequest", { s throws(DecodeError) in _ = try ATTReadByTypeRequest(s) }),
            ("ATTPrepareWriteRequest", { s throws(DecodeError) in _ = try ATTPrepareWriteRequest(s) }),
            ("ATTExecuteWriteRequest", { s throws(DecodeError) in _ = try ATTExecuteWriteRequest(s) }),
            ("ATTSignedWriteCommand", { s throws(DecodeError) in _ = try ATTSignedWriteCommand(s) }),
            ("ATTReadMultipleRequest", { s throws(DecodeError) in _ = try ATTReadMultipleRequest(s) }),
        ]
        var decoded = 0
        for pdu in captured {
            for n in 0...pdu.count {
                for (_, parse) in decoders where attDecodeError(Array(pdu.prefix(n)), parse) == nil { decoded += 1 }
            }
        }
        #expect(decoded > 0)
    }

    @Test func randomPDUsGetAtMostOneBoundedResponse() throws {
        var h = ServerHarness(db: try heraldDatabase())
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt8 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
        var responses = 0
        for round in 0..<20_000 {
            if round == 10_000 { _ = h.ask("02 f7 00") }
            var pdu: [UInt8] = [next() & 0x3F | (next() & 0x40 == 0 ? 0 : 0x40)]
            if next() < 40 { pdu[0] = 0xD2 }
            let length = Int(next() % 30)
            // Keep handles small so requests hit real attributes often.
            for i in 0..<length { pdu.append(i % 2 == 0 ? next() % 0x16 : (next() < 200 ? 0 : next())) }
            let connection = Int(next() % 2)
            let (action, bytes) = h.send(pdu, connection: connection)
            if action == .respond {
                responses += 1
                #expect(!bytes.isEmpty && bytes.count <= Int(h.bearers[connection].mtu))
                // Requests are answered with the matching response or an error naming the request.
                if bytes[0] == 0x01 { #expect(bytes.count == 5 && bytes[1] == pdu[0]) }
            }
        }
        #expect(responses > 1_000)
    }
}
