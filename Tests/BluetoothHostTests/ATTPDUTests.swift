import Testing
@testable import BluetoothHost

// Byte-level codec tests. Hex literals marked "capture" are ATT payloads (after the L2CAP header, CID 4)
// from ../shared/captures (beside the repository)/herald-central-reads-phone.btsnoop (frame numbers given), a Bumble central
// discovering and reading a Bumble Herald peripheral with MTU 247.

@Suite struct ATTPDUTests {
    @Test func opcodeFlags() {
        #expect(ATTOpcode.writeCommand.isCommand && !ATTOpcode.writeCommand.hasAuthenticationSignature)
        #expect(ATTOpcode.signedWriteCommand.isCommand && ATTOpcode.signedWriteCommand.hasAuthenticationSignature)
        #expect(ATTOpcode.signedWriteCommand.method == ATTOpcode.writeRequest.method)
        #expect(ATTOpcode.writeCommand.method == ATTOpcode.writeRequest.method)
        #expect(ATTOpcode.readRequest.kind == .request)
        #expect(ATTOpcode.readResponse.kind == .response)
        #expect(ATTOpcode.handleValueIndication.kind == .indication)
        #expect(ATTOpcode.multipleHandleValueNotification.kind == .notification)
        #expect(ATTOpcode(rawValue: 0x3F).kind == .request)  // unknown, bit 6 clear
        #expect(ATTOpcode(rawValue: 0x7F).kind == .command)  // unknown, bit 6 set
    }

    @Test func errorCodesOfTable3_4() {
        let codes: [(ATTErrorCode, UInt8)] = [
            (.invalidHandle, 0x01), (.readNotPermitted, 0x02), (.writeNotPermitted, 0x03), (.invalidPDU, 0x04),
            (.insufficientAuthentication, 0x05), (.requestNotSupported, 0x06), (.invalidOffset, 0x07),
            (.insufficientAuthorization, 0x08), (.prepareQueueFull, 0x09), (.attributeNotFound, 0x0A),
            (.attributeNotLong, 0x0B), (.encryptionKeySizeTooShort, 0x0C), (.invalidAttributeValueLength, 0x0D),
            (.unlikelyError, 0x0E), (.insufficientEncryption, 0x0F), (.unsupportedGroupType, 0x10),
            (.insufficientResources, 0x11), (.databaseOutOfSync, 0x12), (.valueNotAllowed, 0x13),
        ]
        for (code, raw) in codes { #expect(code.rawValue == raw && !code.isReserved) }
        #expect(ATTErrorCode.application(3).rawValue == 0x83 && ATTErrorCode.application(3).isApplicationError)
        #expect(ATTErrorCode(rawValue: 0x14).isReserved && ATTErrorCode(rawValue: 0x00).isReserved)
        #expect(ATTErrorCode.cccdImproperlyConfigured.rawValue == 0xFD && ATTErrorCode.outOfRange.isCommonProfileError)
    }

    @Test func errorResponseFromCapture() throws {
        let b = attHex("01 10 13 00 0a")  // capture frame 51: Read By Group Type from 0x0013 → Attribute Not Found
        let e = try ATTErrorResponse(b.span)
        #expect(e == ATTErrorResponse(requestOpcode: .readByGroupTypeRequest, handle: 0x0013, error: .attributeNotFound))
        #expect(attEncode(e) == b)
        #expect(e.encodedLength == 5)
    }

    /// Truncated, oversized and wrong-opcode variants of every fixed-size PDU.
    @Test func fixedPDUsRejectMalformedInput() {
        typealias Parse = (Span<UInt8>) throws(DecodeError) -> Void
        let cases: [(String, Parse)] = [
            ("01 10 13 00 0a", { s throws(DecodeError) in _ = try ATTErrorResponse(s) }),
            ("02 f7 00", { s throws(DecodeError) in _ = try ATTExchangeMTURequest(s) }),
            ("03 05 02", { s throws(DecodeError) in _ = try ATTExchangeMTUResponse(s) }),
            ("04 01 00 ff ff", { s throws(DecodeError) in _ = try ATTFindInformationRequest(s) }),
            ("0a 10 00", { s throws(DecodeError) in _ = try ATTReadRequest(s) }),
            ("0c 10 00 16 00", { s throws(DecodeError) in _ = try ATTReadBlobRequest(s) }),
            ("13", { s throws(DecodeError) in _ = try ATTWriteResponse(s) }),
            ("18 01", { s throws(DecodeError) in _ = try ATTExecuteWriteRequest(s) }),
            ("19", { s throws(DecodeError) in _ = try ATTExecuteWriteResponse(s) }),
            ("1e", { s throws(DecodeError) in _ = try ATTHandleValueConfirmation(s) }),
        ]
        for (text, parse) in cases {
            let good = attHex(text)
            #expect(attDecodeError(good, parse) == nil, "\(text)")
            #expect(attDecodeError(good + [0x00], parse) == .trailingBytes(count: 1), "\(text) oversized")
            var wrong = good
            wrong[0] ^= 0x80
            #expect(attDecodeError(wrong, parse) == .unexpectedCode(field: "ATT opcode", value: Int(wrong[0])), "\(text)")
            if good.count > 1 {
                if case .truncated? = attDecodeError(Array(good.dropLast()), parse) {} else {
                    Issue.record("\(text) truncated was accepted")
                }
            }
            if case .truncated? = attDecodeError([], parse) {} else { Issue.record("\(text) empty accepted") }
        }
        #expect(attDecodeError(attHex("18 02"), { s throws(DecodeError) in _ = try ATTExecuteWriteRequest(s) })
            == .invalidValue(field: "Execute Write flags", value: 2))
    }

    /// Truncated and wrong-opcode variants of the PDUs that carry values or lists (they have no
    /// "oversized" form: the value takes the rest of the PDU).
    @Test func variablePDUsRejectMalformedInput() {
        typealias Parse = (Span<UInt8>) throws(DecodeError) -> Void
        let cases: [(String, Int, Parse)] = [
            ("06 01 00 ff ff 00 28 00 18", 7, { s throws(DecodeError) in _ = try ATTFindByTypeValueRequest(s) }),
            ("08 01 00 ff ff 03 28", 7, { s throws(DecodeError) in _ = try ATTReadByTypeRequest(s) }),
            ("10 01 00 ff ff 00 28", 7, { s throws(DecodeError) in _ = try ATTReadByGroupTypeRequest(s) }),
            ("0b 01", 1, { s throws(DecodeError) in _ = try ATTReadResponse(s) }),
            ("0d 01", 1, { s throws(DecodeError) in _ = try ATTReadBlobResponse(s) }),
            ("0f 01", 1, { s throws(DecodeError) in _ = try ATTReadMultipleResponse(s) }),
            ("12 03 00 01", 3, { s throws(DecodeError) in _ = try ATTWriteRequest(s) }),
            ("52 03 00 01", 3, { s throws(DecodeError) in _ = try ATTWriteCommand(s) }),
            ("16 03 00 00 00 01", 5, { s throws(DecodeError) in _ = try ATTPrepareWriteRequest(s) }),
            ("17 03 00 00 00 01", 5, { s throws(DecodeError) in _ = try ATTPrepareWriteResponse(s) }),
            ("1b 03 00 01", 3, { s throws(DecodeError) in _ = try ATTHandleValueNotification(s) }),
            ("1d 03 00 01", 3, { s throws(DecodeError) in _ = try ATTHandleValueIndication(s) }),
            ("05 01 03 00 00 2a", 6, { s throws(DecodeError) in _ = try ATTFindInformationResponse(s) }),
            ("07 01 00 05 00", 5, { s throws(DecodeError) in _ = try ATTFindByTypeValueResponse(s) }),
            ("09 03 01 00 01", 5, { s throws(DecodeError) in _ = try ATTReadByTypeResponse(s) }),
            ("11 06 01 00 05 00 00 18", 8, { s throws(DecodeError) in _ = try ATTReadByGroupTypeResponse(s) }),
            ("0e 01 00 02 00", 5, { s throws(DecodeError) in _ = try ATTReadMultipleRequest(s) }),
            ("20 01 00 02 00", 5, { s throws(DecodeError) in _ = try ATTReadMultipleVariableRequest(s) }),
            ("21 01 00 01", 1, { s throws(DecodeError) in _ = try ATTReadMultipleVariableResponse(s) }),
            ("23 01 00 01 00 01", 6, { s throws(DecodeError) in _ = try ATTMultipleHandleValueNotification(s) }),
            ("d2 01 00" + String(repeating: " 00", count: 12), 15, { s throws(DecodeError) in _ = try ATTSignedWriteCommand(s) }),
        ]
        for (text, minimum, parse) in cases {
            let good = attHex(text)
            #expect(attDecodeError(good, parse) == nil, "\(text)")
            var wrong = good
            wrong[0] = wrong[0] == 0x01 ? 0x02 : 0x01
            #expect(attDecodeError(wrong, parse) == .unexpectedCode(field: "ATT opcode", value: Int(wrong[0])), "\(text)")
            // Every prefix shorter than the minimum is refused.
            for n in 0..<minimum {
                #expect(attDecodeError(Array(good.prefix(n)), parse) != nil, "\(text) cut to \(n)")
            }
        }
    }

    @Test func exchangeMTUFromCapture() throws {
        let req = attHex("02 f7 00")  // frame 40
        #expect(try ATTExchangeMTURequest(req.span).clientRxMTU == 247)
        let rsp = attHex("03 05 02")  // frame 42: Bumble's server offers 517
        #expect(try ATTExchangeMTUResponse(rsp.span).serverRxMTU == 517)
        #expect(attEncode(ATTExchangeMTURequest(clientRxMTU: 247)) == req)
        #expect(attEncode(ATTExchangeMTUResponse(serverRxMTU: 517)) == rsp)
    }

    @Test func readByGroupTypeFromCapture() throws {
        let req = attHex("10 01 00 ff ff 00 28")  // frame 43
        let r = try ATTReadByGroupTypeRequest(req.span)
        #expect(r.startingHandle == 1 && r.endingHandle == 0xFFFF && r.attributeGroupType.uuid16 == 0x2800)
        #expect(attEncode(r) == req)

        let rsp = attHex("11 06 01 00 05 00 00 18 06 00 0d 00 01 18")  // frame 45: GAP and GATT services
        let p = try ATTReadByGroupTypeResponse(rsp.span)
        #expect(p.count == 2)
        var it = p.makeIterator()
        var seen: [(UInt16, UInt16, [UInt8])] = []
        while let e = it.next() { seen.append((e.handle, e.endGroupHandle, attArray(e.value))) }
        #expect(seen.count == 2)
        #expect(seen[0].0 == 1 && seen[0].1 == 5 && seen[0].2 == [0x00, 0x18])
        #expect(seen[1].0 == 6 && seen[1].1 == 0x0D && seen[1].2 == [0x01, 0x18])
        #expect(attEncode(p) == rsp)

        let long = attHex("11 14 0e 00 12 00 9b fd 5b d6 72 45 1e 80 d3 42 46 47 af 32 81 42")  // frame 48: Herald
        let q = try ATTReadByGroupTypeResponse(long.span)
        var it2 = q.makeIterator()
        guard let first = it2.next() else { Issue.record("no entry"); return }
        let uuid = try BluetoothUUID(wire: first.value)
        let (h, end) = (first.handle, first.endGroupHandle)
        #expect(h == 0x0E && end == 0x12)
        #expect(uuid == BluetoothUUID("428132af-4746-42d3-801e-4572d65bfd9b"))
        var none = true
        if it2.next() != nil { none = false }
        #expect(none)

        // Length octet below the minimum, list not a multiple of the length, empty list.
        let bad = [attHex("11 03 01 00 05"), attHex("11 06 01 00 05 00 00 18 06"), attHex("11 06")]
        for b in bad {
            #expect(attDecodeError(b, { s throws(DecodeError) in _ = try ATTReadByGroupTypeResponse(s) }) != nil)
        }
        // A 4-byte UUID is not an ATT UUID (Part F 3.2.1).
        #expect(attDecodeError(attHex("10 01 00 ff ff 00 28 00 00"), { s throws(DecodeError) in
            _ = try ATTReadByGroupTypeRequest(s) }) == .badLength(field: "ATT UUID", declared: 4, limit: 16))
    }

    @Test func readByTypeFromCapture() throws {
        let req = attHex("08 0e 00 12 00 03 28")  // frame 52: characteristics of the Herald service
        let r = try ATTReadByTypeRequest(req.span)
        #expect(r.startingHandle == 0x0E && r.endingHandle == 0x12 && r.attributeType.uuid16 == 0x2803)
        #expect(attEncode(r) == req)
        let rsp = attHex("""
            09 15 0f 00 02 10 00 e7 33 89 8f e3 43 21 a1 29 48 05 8f f8 c0 98 3e
            11 00 08 12 00 11 1a 82 80 9a e0 24 83 7a 43 2e 09 13 b8 17 f6
            """)  // frame 54
        let p = try ATTReadByTypeResponse(rsp.span)
        #expect(p.length == 21 && p.count == 2)
        var it = p.makeIterator()
        var handles: [UInt16] = []
        var properties: [UInt8] = []
        while let e = it.next() { handles.append(e.handle); properties.append(e.value[0]) }
        #expect(handles == [0x0F, 0x11] && properties == [0x02, 0x08])
        #expect(attEncode(p) == rsp)
        #expect(attDecodeError(Array(rsp.dropLast()), { s throws(DecodeError) in _ = try ATTReadByTypeResponse(s) })
            == .badLength(field: "Attribute Data List", declared: 41, limit: 21))
        #expect(attDecodeError(attHex("09 01 0f"), { s throws(DecodeError) in _ = try ATTReadByTypeResponse(s) })
            == .invalidValue(field: "Read By Type length", value: 1))
    }

    @Test func readFromCapture() throws {
        let req = attHex("0a 10 00")  // frame 58
        #expect(try ATTReadRequest(req.span).handle == 0x10)
        let rsp = attHex("0b 10 03 3a 00 01" + String(repeating: "5a", count: 16))  // frame 60: Herald payload
        let p = try ATTReadResponse(rsp.span)
        let (n, first) = (p.value.count, p.value[0])
        #expect(n == 21 && first == 0x10)
        #expect(attEncode(p) == rsp)
        let empty = attHex("0b")
        #expect(try ATTReadResponse(empty.span).value.count == 0)
        #expect(attDecodeError(attHex("0d 00"), { s throws(DecodeError) in _ = try ATTReadResponse(s) })
            == .unexpectedCode(field: "ATT opcode", value: 0x0D))
    }

    @Test func writesFromSignalCapture() throws {
        // herald-phone-receives-signal-writes.btsnoop frames 56, 65, 74, 77.
        let w = attHex("12 12 00 01 15 00 10 03 3a 00 02 ee ee ee ee ee ee ee ee ee ee ee ee")
        let p = try ATTWriteRequest(w.span)
        let (h, n) = (p.handle, p.value.count)
        #expect(h == 0x12 && n == 20)
        #expect(attEncode(p) == w)
        let prep = attHex("16 12 00 00 00 03 d6 ff 2a 00 10 03 3a 00 03 11 11 11 11 11 11 11 11")
        let q = try ATTPrepareWriteRequest(prep.span)
        let (qh, qo, qn) = (q.handle, q.offset, q.partValue.count)
        #expect(qh == 0x12 && qo == 0 && qn == 18)
        let echo = ATTPrepareWriteResponse(handle: q.handle, offset: q.offset, partValue: q.partValue)
        var expected = prep
        expected[0] = 0x17
        #expect(attEncode(echo) == expected)
        #expect(attEncode(q) == prep)
        #expect(try ATTExecuteWriteRequest(attHex("18 01").span).flags == .write)
        #expect(attEncode(ATTExecuteWriteRequest(flags: .cancel)) == [0x18, 0x00])
        #expect(attDecodeError(attHex("16 12 00 00"), { s throws(DecodeError) in _ = try ATTPrepareWriteRequest(s) })
            == .truncated(needed: 5, available: 4))
        #expect(attDecodeError(attHex("12 12"), { s throws(DecodeError) in _ = try ATTWriteRequest(s) })
            == .truncated(needed: 3, available: 2))
        let cmd = attHex("52 12 00 ca fe 01")
        let c = try ATTWriteCommand(cmd.span)
        #expect(c.handle == 0x12 && attEncode(c) == cmd)
    }

    @Test func signedWriteCommand() throws {
        let b = attHex("d2 12 00 ca fe" + "01 00 00 00" + "a1 a2 a3 a4 a5 a6 a7 a8")
        let s = try ATTSignedWriteCommand(b.span)
        let (h, v, sig) = (s.handle, attArray(s.value), attArray(s.authenticationSignature))
        #expect(h == 0x12 && v == [0xCA, 0xFE] && sig.count == 12 && sig[0] == 1)
        #expect(attEncode(s) == b)
        #expect(attDecodeError(Array(b.prefix(14)), { s throws(DecodeError) in _ = try ATTSignedWriteCommand(s) })
            == .truncated(needed: 15, available: 14))
    }

    @Test func findInformation() throws {
        let req = attHex("04 01 00 ff ff")
        let r = try ATTFindInformationRequest(req.span)
        #expect(r == ATTFindInformationRequest(startingHandle: 1, endingHandle: 0xFFFF))
        let short = attHex("05 01 03 00 00 2a 05 00 01 2a")
        let p = try ATTFindInformationResponse(short.span)
        var it = p.makeIterator()
        var types: [UInt16?] = []
        var handles: [UInt16] = []
        while let e = it.next() { types.append(e.type.uuid16); handles.append(e.handle) }
        #expect(types == [0x2A00, 0x2A01] && handles == [3, 5])
        #expect(attEncode(p) == short)
        let long = attHex("05 02 10 00 9b fd 5b d6 72 45 1e 80 d3 42 46 47 af 32 81 42")
        let q = try ATTFindInformationResponse(long.span)
        var it2 = q.makeIterator()
        let e0 = it2.next()
        let e = try #require(e0)
        #expect(e.handle == 0x10 && e.type == BluetoothUUID("428132af-4746-42d3-801e-4572d65bfd9b"))
        #expect(attDecodeError(attHex("05 03 10 00 00 2a"), { s throws(DecodeError) in _ = try ATTFindInformationResponse(s) })
            == .invalidValue(field: "Find Information format", value: 3))
        #expect(attDecodeError(attHex("05 02 10 00 00 2a"), { s throws(DecodeError) in _ = try ATTFindInformationResponse(s) })
            == .badLength(field: "Find Information data", declared: 4, limit: 18))
    }

    @Test func findByTypeValue() throws {
        let req = attHex("06 01 00 ff ff 00 28 9b fd 5b d6 72 45 1e 80 d3 42 46 47 af 32 81 42")
        let r = try ATTFindByTypeValueRequest(req.span)
        let (s, e, t, n) = (r.startingHandle, r.endingHandle, r.attributeType, r.attributeValue.count)
        #expect(s == 1 && e == 0xFFFF && t == 0x2800 && n == 16)
        #expect(attEncode(r) == req)
        let rsp = attHex("07 0e 00 12 00")
        let p = try ATTFindByTypeValueResponse(rsp.span)
        var it = p.makeIterator()
        let (x, y) = (it.next(), it.next())
        #expect(x == .init(foundAttributeHandle: 0x0E, groupEndHandle: 0x12))
        #expect(y == nil)
        #expect(attEncode(p) == rsp)
        #expect(attDecodeError(attHex("07 0e 00 12"), { s throws(DecodeError) in _ = try ATTFindByTypeValueResponse(s) })
            == .badLength(field: "Handles Information List", declared: 3, limit: 4))
        #expect(attDecodeError(attHex("06 01 00 ff ff 00"), { s throws(DecodeError) in _ = try ATTFindByTypeValueRequest(s) })
            == .truncated(needed: 7, available: 6))
    }

    @Test func readBlobAndMultiple() throws {
        let blob = attHex("0c 10 00 16 00")
        let b = try ATTReadBlobRequest(blob.span)
        #expect(b == ATTReadBlobRequest(handle: 0x10, offset: 22))
        #expect(attEncode(b) == blob)
        let brsp = attHex("0d 5a 5a")
        #expect(attEncode(try ATTReadBlobResponse(brsp.span)) == brsp)

        let multi = attHex("0e 03 00 10 00")
        let m = try ATTReadMultipleRequest(multi.span)
        let (count, h0, h1) = (m.setOfHandles.count, m.setOfHandles[0], m.setOfHandles[1])
        #expect(count == 2 && h0 == 3 && h1 == 0x10)
        #expect(attEncode(m) == multi)
        #expect(attDecodeError(attHex("0e 03 00"), { s throws(DecodeError) in _ = try ATTReadMultipleRequest(s) }) != nil)
        #expect(attDecodeError(attHex("0e 03 00 10 00 01"), { s throws(DecodeError) in _ = try ATTReadMultipleRequest(s) })
            == .badLength(field: "Set Of Handles", declared: 5, limit: 2))
        let mrsp = attHex("0f 41 42 10 03")
        #expect(attEncode(try ATTReadMultipleResponse(mrsp.span)) == mrsp)

        let variable = attHex("20 03 00 10 00")
        let v = try ATTReadMultipleVariableRequest(variable.span)
        #expect(attEncode(v) == variable)
        let vrsp = attHex("21 02 00 41 42 05 00 10 03")  // second value truncated: 2 of 5 octets
        let vr = try ATTReadMultipleVariableResponse(vrsp.span)
        var it = vr.makeIterator()
        guard let a = it.next() else { Issue.record("no entry"); return }
        let (alen, aval, atrunc) = (a.valueLength, attArray(a.value), a.isTruncated)
        #expect(alen == 2 && aval == [0x41, 0x42] && !atrunc)
        guard let c = it.next() else { Issue.record("no entry"); return }
        let (clen, cval, ctrunc) = (c.valueLength, attArray(c.value), c.isTruncated)
        #expect(clen == 5 && cval == [0x10, 0x03] && ctrunc)
        var ended = true
        if it.next() != nil { ended = false }
        #expect(ended)
        #expect(attEncode(vr) == vrsp)
    }

    @Test func notificationsAndIndications() throws {
        let ntf = attHex("1b 10 00 01 02 03")
        let n = try ATTHandleValueNotification(ntf.span)
        #expect(n.handle == 0x10 && attEncode(n) == ntf)
        let ind = attHex("1d 07 00 01 00 ff ff")
        let i = try ATTHandleValueIndication(ind.span)
        #expect(i.handle == 7 && attEncode(i) == ind)
        #expect(attDecodeError(ind, { s throws(DecodeError) in _ = try ATTHandleValueNotification(s) })
            == .unexpectedCode(field: "ATT opcode", value: 0x1D))

        let multi = attHex("23 10 00 02 00 aa bb 12 00 01 00 cc")
        let m = try ATTMultipleHandleValueNotification(multi.span)
        var it = m.makeIterator()
        var got: [(UInt16, [UInt8])] = []
        while let e = it.next() { got.append((e.handle, attArray(e.value))) }
        #expect(got.count == 2 && got[0].0 == 0x10 && got[0].1 == [0xAA, 0xBB] && got[1].0 == 0x12 && got[1].1 == [0xCC])
        #expect(attEncode(m) == multi)
        #expect(attDecodeError(attHex("23 10 00 05 00 aa"), { s throws(DecodeError) in
            _ = try ATTMultipleHandleValueNotification(s) }) == .truncated(needed: 9, available: 5))
        #expect(attDecodeError(attHex("23"), { s throws(DecodeError) in _ = try ATTMultipleHandleValueNotification(s) }) != nil)
    }

    @Test func buildersStopAtMTU() throws {
        // Read By Type: 23-byte MTU holds 2 + 3 × 7 octets of 5-byte values, not a fourth.
        var sink = ATTTestSink()
        var b = ATTReadByTypeResponse.Builder(mtu: 23)
        let five: [UInt8] = [1, 2, 3, 4, 5]
        var accepted = 0
        for h in UInt16(1)...5 where b.append(handle: h, value: five.span, to: &sink) { accepted += 1 }
        #expect(accepted == 3 && sink.bytes.count == 23)
        #expect(sink.bytes.prefix(4) == [0x09, 0x07, 0x01, 0x00])
        // A different length stops the list.
        var s2 = ATTTestSink()
        var b2 = ATTReadByTypeResponse.Builder(mtu: 23)
        #expect(b2.append(handle: 1, value: five.span, to: &s2))
        #expect(!b2.append(handle: 2, value: five.span.extracting(0..<4), to: &s2))
        // Long values are cut to MTU-4 in the first entry.
        var s3 = ATTTestSink()
        var b3 = ATTReadByTypeResponse.Builder(mtu: 23)
        let long = [UInt8](repeating: 7, count: 40)
        #expect(b3.append(handle: 1, value: long.span, to: &s3))
        #expect(s3.bytes.count == 23 && s3.bytes[1] == 21)

        // Find Information: one UUID size per response.
        var s4 = ATTTestSink()
        var f = ATTFindInformationResponse.Builder(mtu: 23)
        #expect(f.append(handle: 1, type: BluetoothUUID(uuid16: 0x2800), to: &s4))
        #expect(!f.append(handle: 2, type: try #require(BluetoothUUID("428132af-4746-42d3-801e-4572d65bfd9b")), to: &s4))
        #expect(s4.bytes == attHex("05 01 01 00 00 28"))

        // Read Multiple Variable: cut at MTU-1 octets, even inside a value.
        var s5 = ATTTestSink()
        var v = ATTReadMultipleVariableResponse.Builder(mtu: 23)
        #expect(v.append(value: long.span, to: &s5))
        #expect(v.isFull && !v.append(value: five.span, to: &s5))
        #expect(s5.bytes.count == 23 && s5.bytes[1] == 40 && s5.bytes[2] == 0)

        // Read By Group Type and Multiple Handle Value Notification.
        var s6 = ATTTestSink()
        var g = ATTReadByGroupTypeResponse.Builder(mtu: 23)
        let u16: [UInt8] = [0x00, 0x18]
        for i in 0..<4 { _ = g.append(handle: UInt16(i * 5 + 1), endGroupHandle: UInt16(i * 5 + 5), value: u16.span, to: &s6) }
        #expect(g.budget.count == 3 && s6.bytes.count == 20)
        var s7 = ATTTestSink()
        var mn = ATTMultipleHandleValueNotification.Builder(mtu: 23)
        #expect(mn.append(handle: 1, value: long.span.extracting(0..<10), to: &s7))
        #expect(!mn.append(handle: 2, value: long.span.extracting(0..<10), to: &s7))
        #expect(s7.bytes.count == 15)
    }
}
