import Testing
@testable import BluetoothHost

@Suite struct GATTServerTests {
    /// Replays the central's requests from herald-phone-peripheral.btsnoop (frames 39–60) against our
    /// database laid out like the Bumble phone, and expects Bumble's responses byte for byte.
    @Test func answersLikeBumblePhoneInCapture() throws {
        var h = ServerHarness(maximumMTU: 517, db: try heraldDatabase())
        let exchange: [(String, String)] = [
            ("02 f7 00", "03 05 02"),
            ("10 01 00 ff ff 00 28", "11 06 01 00 05 00 00 18 06 00 0d 00 01 18"),
            ("10 0e 00 ff ff 00 28", "11 14 0e 00 12 00 9b fd 5b d6 72 45 1e 80 d3 42 46 47 af 32 81 42"),
            ("10 13 00 ff ff 00 28", "01 10 13 00 0a"),
            ("08 0e 00 12 00 03 28", """
                09 15 0f 00 02 10 00 e7 33 89 8f e3 43 21 a1 29 48 05 8f f8 c0 98 3e
                11 00 08 12 00 11 1a 82 80 9a e0 24 83 7a 43 2e 09 13 b8 17 f6
                """),
            ("08 12 00 12 00 03 28", "01 08 12 00 0a"),
            ("0a 10 00", "0b 10 03 3a 00 01 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a 5a"),
        ]
        for (request, response) in exchange {
            #expect(h.ask(request) == attHex(response), "\(request)")
        }
        #expect(h.bearers[0].mtu == 247)
    }

    /// herald-phone-receives-signal-writes.btsnoop frames 38–78: MTU 23, discovery, a write, prepared
    /// writes of the 50-byte payload-sharing message, execute, and a short write.
    @Test func signalWritesFromCapture() throws {
        var h = ServerHarness(db: try heraldDatabase())
        let exchange: [(String, String)] = [
            ("08 10 00 12 00 03 28", "09 15 11 00 08 12 00 11 1a 82 80 9a e0 24 83 7a 43 2e 09 13 b8 17 f6"),
            ("12 12 00 01 15 00 10 03 3a 00 02 ee ee ee ee ee ee ee ee ee ee ee ee", "13"),
            ("16 12 00 00 00 03 d6 ff 2a 00 10 03 3a 00 03 11 11 11 11 11 11 11 11",
             "17 12 00 00 00 03 d6 ff 2a 00 10 03 3a 00 03 11 11 11 11 11 11 11 11"),
            ("16 12 00 12 00 11 11 11 11 11 11 11 11 10 03 3a 00 04 22 22 22 22 22",
             "17 12 00 12 00 11 11 11 11 11 11 11 11 10 03 3a 00 04 22 22 22 22 22"),
            ("16 12 00 24 00 22 22 22 22 22 22 22 22 22 22 22", "17 12 00 24 00 22 22 22 22 22 22 22 22 22 22 22"),
            ("18 01", "19"),
            ("12 12 00 04 03 00 ca fe 01", "13"),
        ]
        for (request, response) in exchange { #expect(h.ask(request) == attHex(response), "\(request)") }
        let w = h.delegate.writes
        // Three consecutive prepared parts reach the delegate as one write of the whole message.
        #expect(w.count == 3)
        // The application's own error codes reach the client unchanged, on the written handle.
        h.delegate.refuseWrites = .application(1)
        #expect(h.ask("12 12 00 01") == attHex("01 12 12 00 81"))
        _ = h.ask("16 12 00 00 00 01")
        #expect(h.ask("18 01") == attHex("01 18 12 00 81"))
        #expect(w.map(\.offset) == [0, 0, 0] && w.allSatisfy { $0.id == 10 })
        let shared = w[1].value
        // Signal message 0x03 (payload sharing): RSSI -42, length 42, then the shared payloads.
        #expect(shared.count == 47 && Array(shared[0..<5]) == [0x03, 0xD6, 0xFF, 0x2A, 0x00])
        #expect(Array(shared[5..<10]) == [0x10, 0x03, 0x3A, 0x00, 0x03])
        #expect(w[2].value == [0x04, 0x03, 0x00, 0xCA, 0xFE, 0x01])
    }

    @Test func errorResponsesCarryOpcodeHandleAndCode() throws {
        var db = try heraldDatabase()
        var long = [UInt8](repeating: 0x33, count: 40)
        let longHandle = try db.addCharacteristic(BluetoothUUID(uuid16: 0xAAA1), properties: .read | .write | .writeWithoutResponse,
                                                  permissions: .readWrite, value: .stored(long.span, maxLength: 60)).value
        #expect(longHandle == 0x14)
        var h = ServerHarness(db: db)
        let cases: [(String, String, String)] = [
            ("read past the end", "0a 00 01", "01 0a 00 01 01"),
            ("read handle 0", "0a 00 00", "01 0a 00 00 01"),
            ("service changed is not readable", "0a 08 00", "01 0a 08 00 02"),
            ("device name is read-only", "12 03 00 41", "01 12 03 00 03"),
            ("offset past a long value", "0c 14 00 29 00", "01 0c 14 00 07"),
            ("blob of a fixed short declaration", "0c 02 00 00 00", "01 0c 02 00 0b"),
            ("value longer than its maximum", "12 14 00" + String(repeating: " 01", count: 61), "01 12 14 00 0d"),
            ("CCCD takes two octets", "12 09 00 01", "01 12 09 00 0d"),
            ("nothing in range", "04 20 00 ff ff", "01 04 20 00 0a"),
            ("characteristics are not groups", "10 01 00 ff ff 03 28", "01 10 01 00 10"),
            ("unknown request", "3f 01 02", "01 3f 00 00 06"),
            ("truncated request", "0a 10", "01 0a 00 00 04"),
            ("oversized request", "0a 10 00 00", "01 0a 00 00 04"),
            ("start handle 0", "04 00 00 ff ff", "01 04 00 00 01"),
            ("start above end", "08 05 00 04 00 03 28", "01 08 05 00 01"),
            ("group start above end", "10 05 00 04 00 00 28", "01 10 05 00 01"),
            ("find by type value start 0", "06 00 00 ff ff 00 28 00 18", "01 06 00 00 01"),
            ("read multiple with an invalid handle", "0e 03 00 50 00", "01 0e 50 00 01"),
            ("read multiple with an unreadable handle", "0e 03 00 08 00", "01 0e 08 00 02"),
            ("prepare on read-only", "16 03 00 00 00 41", "01 16 03 00 03"),
            ("bad execute flags", "18 02", "01 18 00 00 04"),
            ("client clears a supported feature", "12 0b 00 00", "01 12 0b 00 13"),
        ]
        _ = h.ask("02 f7 00")  // MTU 247 so the 44-octet write below is a legal PDU
        #expect(h.ask("12 0b 00 01") == [0x13])  // set Robust Caching first
        for (name, request, response) in cases {
            #expect(h.ask(request) == attHex(response), "\(name)")
        }
        // Writes that fail changed nothing.
        #expect(attArray(h.db.value(longHandle)) == long)
        long[0] = 0
        // Unknown commands, write commands that fail and signed writes are silent.
        #expect(h.send("7f 01 02").0 == .none)
        #expect(h.send("52 03 00 41").0 == .none)
        #expect(h.send("d2 14 00 99" + String(repeating: " 00", count: 12)).0 == .none)
        #expect(h.db.value(longHandle)[0] == 0x33)
        // A write command that is allowed does write.
        #expect(h.send("52 14 00 99").0 == .none)
        #expect(attArray(h.db.value(longHandle)) == [0x99])
        // Responses and notifications are for the client role: ignored here.
        #expect(h.send("0b 01 02").0 == .none && h.send("1b 10 00 01").0 == .none)
        #expect(h.send("").0 == .none)
    }

    @Test func permissionsDemandSecurity() throws {
        var db = try heraldDatabase()
        let v: [UInt8] = [1]
        let enc = try db.addCharacteristic(BluetoothUUID(uuid16: 0xBB01), properties: .read,
                                           permissions: .read | .readEncrypted, value: .stored(v.span, maxLength: 1)).value
        let mitm = try db.addCharacteristic(BluetoothUUID(uuid16: 0xBB02), properties: .write,
                                            permissions: .write | .writeAuthenticated, value: .stored(v.span, maxLength: 1)).value
        let authz = try db.addCharacteristic(BluetoothUUID(uuid16: 0xBB03), properties: .read,
                                             permissions: .read | .readAuthorized, value: .stored(v.span, maxLength: 1)).value
        var h = ServerHarness(db: db)
        func read(_ handle: UInt16) -> String { "0a " + le16(handle) }
        // Not encrypted, no key: authenticate (pair) first.
        #expect(h.ask(read(enc)).last == ATTErrorCode.insufficientAuthentication.rawValue)
        // Bonded but not yet encrypted: encrypt.
        h.bearers[0].security.bonded = true
        #expect(h.ask(read(enc)).last == ATTErrorCode.insufficientEncryption.rawValue)
        // Encrypted with a short key.
        h.bearers[0].security.encrypted = true
        h.bearers[0].security.keySize = 6
        #expect(h.ask(read(enc)).last == ATTErrorCode.encryptionKeySizeTooShort.rawValue)
        h.bearers[0].security.keySize = 16
        #expect(h.ask(read(enc)) == [0x0B, 0x01])
        // Encrypted but unauthenticated key: MITM-protected write refused with its handle.
        let w = h.ask("12 " + le16(mitm) + " 07")
        #expect(w == [0x01, 0x12, UInt8(mitm), 0x00, 0x05])
        h.bearers[0].security.authenticated = true
        #expect(h.ask("12 " + le16(mitm) + " 07") == [0x13])
        #expect(h.ask(read(authz)).last == ATTErrorCode.insufficientAuthorization.rawValue)
        h.bearers[0].security.authorized = true
        #expect(h.ask(read(authz)) == [0x0B, 0x01])
        // Read By Type reports the first match's error on its handle.
        h.bearers[0].security = ATTLinkSecurity()
        #expect(h.ask("08 01 00 ff ff 01 bb") == [0x01, 0x08, UInt8(enc), 0x00, 0x05])
    }

    @Test func mtuExchange() throws {
        var h = ServerHarness(db: try heraldDatabase())
        #expect(h.bearers[0].mtu == 23)
        #expect(h.ask("02 05 02") == [0x03, 0xF7, 0x00])  // client 517, we offer 247
        #expect(h.bearers[0].mtu == 247)
        #expect(h.ask("02 17 00") == [0x03, 0xF7, 0x00])  // a second exchange changes nothing
        #expect(h.bearers[0].mtu == 247)
        #expect(h.ask("02 0a 00", connection: 1) == [0x03, 0xF7, 0x00])  // below 23 means 23
        #expect(h.bearers[1].mtu == 23)
    }

    /// A 200-byte value read the way a client does (Read, then Read Blob while responses are full)
    /// at MTU 23 and at MTU 247; the value changes between reads but each connection sees its snapshot.
    @Test func longReadsViaReadBlob() throws {
        var db = try heraldDatabase()
        let handle = try db.addCharacteristic(BluetoothUUID(uuid16: 0xCC01), properties: .read, permissions: .read,
                                              value: .dynamic(id: 1)).value
        var h = ServerHarness(db: db)
        _ = h.ask("02 f7 00", connection: 1)
        func readLong(_ h: inout ServerHarness, connection: Int, interleave: (inout ServerHarness) -> Void) -> ([UInt8], Int) {
            let mtu = Int(h.bearers[connection].mtu)
            var value = Array(h.ask("0a " + le16(handle), connection: connection).dropFirst())
            var requests = 1
            var last = value.count
            while last == mtu - 1 {
                interleave(&h)
                let r = h.ask("0c " + le16(handle) + " " + le16(UInt16(value.count)),
                              connection: connection)
                #expect(r[0] == 0x0D)
                value += r.dropFirst()
                last = r.count - 1
                requests += 1
            }
            return (value, requests)
        }
        // Connection 0 (MTU 23) while connection 1 starts its own reads in between.
        let (small, smallRequests) = readLong(&h, connection: 0) { h in _ = h.ask("0a " + le16(handle), connection: 1) }
        #expect(small.count == 200 && smallRequests == 10)
        #expect(small == (0..<200).map { UInt8($0) ^ 1 })  // the snapshot from the first read only
        let (big, bigRequests) = readLong(&h, connection: 1) { _ in }
        #expect(big.count == 200 && bigRequests == 1)
        #expect(h.delegate.version > 2)
        // Past the end of the snapshot: the delegate's Invalid Offset, on the handle.
        #expect(h.ask("0c " + le16(handle) + " c9 00") == [0x01, 0x0C, UInt8(handle), 0x00, 0x07])
    }

    @Test func longStoredValueAndPreparedWrites() throws {
        var db = try heraldDatabase()
        let initial = [UInt8](repeating: 0xA0, count: 30)
        let handle = try db.addCharacteristic(BluetoothUUID(uuid16: 0xCC02), properties: .read | .write, permissions: .readWrite,
                                              value: .stored(initial.span, maxLength: 60)).value
        var h = ServerHarness(db: db)
        let hl = le16(handle)
        // At MTU 23 a 65-octet Prepare Write cannot be sent; the server refuses it as Invalid PDU.
        #expect(h.ask("16 \(hl) 01 00" + String(repeating: " 02", count: 60)) == attHex("01 16 00 00 04"))
        _ = h.ask("02 f7 00")
        // Read Blob at offset 22 and exactly at the end (empty part, not an error).
        #expect(h.ask("0c \(hl) 16 00") == [0x0D] + [UInt8](repeating: 0xA0, count: 8))
        #expect(h.ask("0c \(hl) 1e 00") == [0x0D])
        // Cancel leaves the value alone.
        _ = h.ask("16 \(hl) 00 00 01 02 03")
        #expect(h.bearers[0].queuedWrites == 1)
        #expect(h.ask("18 00") == [0x19])
        #expect(h.bearers[0].queuedWrites == 0 && attArray(h.db.value(handle)) == initial)
        // Two parts make a 40-byte value.
        _ = h.ask("16 \(hl) 00 00" + String(repeating: " 11", count: 18))
        _ = h.ask("16 \(hl) 12 00" + String(repeating: " 22", count: 22))
        #expect(h.ask("18 01") == [0x19])
        #expect(attArray(h.db.value(handle)) == [UInt8](repeating: 0x11, count: 18) + [UInt8](repeating: 0x22, count: 22))
        // The two consecutive parts were queued as one entry, so the value is written once.
        #expect(h.delegate.storedWrites == [handle])
        // A part beyond the maximum fails the whole queue, nothing written, error names the handle.
        _ = h.ask("16 \(hl) 00 00 01")
        _ = h.ask("16 \(hl) 01 00" + String(repeating: " 02", count: 60))
        #expect(h.ask("18 01") == [0x01, 0x18, UInt8(handle), 0x00, 0x0D])
        #expect(h.db.value(handle).count == 40 && h.bearers[0].queuedWrites == 0)
        // A gap (offset past what exists) is Invalid Offset.
        _ = h.ask("16 \(hl) 32 00 01")
        #expect(h.ask("18 01") == [0x01, 0x18, UInt8(handle), 0x00, 0x07])
    }

    @Test func prepareQueueFull() throws {
        var h = ServerHarness(db: try heraldDatabase())
        var bearer = ATTBearer<ATTPreparedWrites<2, 16>>()
        var delegate = QueueSizedDelegate<ATTPreparedWrites<2, 16>, _>(base: RecordingDelegate())
        func send(_ hex: String) -> [UInt8] {
            var out = ATTTestSink()
            _ = h.server.handle(pdu: attHex(hex).span, bearer: &bearer, link: h.link(0), now: 0, database: &h.db,
                                delegate: &delegate, response: &out)
            return out.bytes
        }
        // Parts that do not continue each other take one entry each.
        #expect(send("16 12 00 00 00 01 02") == attHex("17 12 00 00 00 01 02"))
        #expect(send("16 12 00 04 00 03 04") == attHex("17 12 00 04 00 03 04"))
        #expect(send("16 12 00 01 00 05") == attHex("01 16 12 00 09"))  // out of entries
        // A continuing part extends the last entry: no new entry needed.
        #expect(send("16 12 00 06 00 05") == attHex("17 12 00 06 00 05"))
        #expect(bearer.queuedWrites == 2)
        #expect(send("18 00") == [0x19])
        #expect(send("16 12 00 00 00" + String(repeating: " 01", count: 17)) == attHex("01 16 12 00 09"))  // out of bytes
        #expect(delegate.base.writes.isEmpty)
    }

    @Test func indicationConfirmAndTimeout() throws {
        var h = ServerHarness(db: try heraldDatabase())
        let sc = h.db.serviceChanged
        #expect(sc.value == 8 && sc.clientConfiguration == 9)
        let range: [UInt8] = [0x01, 0x00, 0xFF, 0xFF]
        func indicate(_ h: inout ServerHarness, connection: Int = 0) -> (ATTIndicationResult, [UInt8]) {
            var out = ATTTestSink()
            let r = h.server.indicate(handle: 8, value: range.span, bearer: &h.bearers[connection], link: h.link(connection),
                                      now: h.now, database: h.db, into: &out)
            return (r, out.bytes)
        }
        #expect(indicate(&h).0 == .notEnabled)
        #expect(h.ask("12 09 00 02 00") == [0x13])
        #expect(h.delegate.configurations.count == 1 && h.delegate.configurations[0] == (8, 0x0040, 2))
        #expect(h.ask("0a 09 00") == [0x0B, 0x02, 0x00])
        #expect(h.ask("0a 09 00", connection: 1) == [0x0B, 0x00, 0x00])  // per connection
        let (r1, pdu) = indicate(&h)
        #expect(r1 == .sent && pdu == attHex("1d 08 00 01 00 ff ff"))
        #expect(indicate(&h).0 == .busy)
        #expect(h.bearers[0].nextDeadline == h.now + 30_000)
        h.now += 1_000
        #expect(h.send("1e") == (.indicationConfirmed(handle: 8), []))
        #expect(h.send("1e").0 == .none)  // nothing outstanding
        #expect(h.bearers[0].nextDeadline == nil)
        // Second indication is never confirmed.
        #expect(indicate(&h).0 == .sent)
        let deadline = try #require(h.bearers[0].nextDeadline)
        #expect(h.server.poll(bearer: &h.bearers[0], now: deadline - 1) == .none)
        h.now = deadline
        #expect(h.send("0a 10 00").0 == .disconnect)  // the timer fires on the next PDU too
        #expect(h.bearers[0].isTimedOut && h.bearers[0].nextDeadline == nil)
        #expect(h.send("0a 10 00").0 == .none)  // dead bearer: no more PDUs
        #expect(indicate(&h).0 == .bearerClosed)
        #expect(h.server.poll(bearer: &h.bearers[0], now: deadline + 1) == .none)
        // Writing the same CCCD value again is not a change.
        #expect(h.ask("12 09 00 02 00", connection: 1) == [0x13])
        #expect(h.ask("12 09 00 02 00", connection: 1) == [0x13])
        #expect(h.delegate.configurations.count == 2)
    }

    @Test func notificationsFollowEachConnectionsCCCD() throws {
        var db = try heraldDatabase()
        let c = try db.addCharacteristic(BluetoothUUID(uuid16: 0xDD01), properties: .read | .notify, permissions: .read,
                                         value: .dynamic(id: 2))
        var h = ServerHarness(db: db)
        let value = [UInt8](repeating: 7, count: 30)
        func notify(_ h: inout ServerHarness, _ connection: Int) -> [UInt8] {
            var out = ATTTestSink()
            _ = h.server.notify(handle: c.value, value: value.span, bearer: h.bearers[connection], link: h.link(connection),
                                database: h.db, into: &out)
            return out.bytes
        }
        #expect(notify(&h, 0).isEmpty)
        // Indication bit on a notify-only characteristic is dropped.
        #expect(h.ask("12 " + le16(c.clientConfiguration) + " 03 00") == [0x13])
        #expect(h.db.clientConfiguration(valueHandle: c.value, link: h.link(0)) == .notification)
        let n = notify(&h, 0)
        #expect(n.count == 23 && Array(n.prefix(3)) == [0x1B, UInt8(c.value), 0x00])  // cut to MTU-3
        #expect(notify(&h, 1).isEmpty)
        h.db.resetLink(h.link(0))
        #expect(notify(&h, 0).isEmpty)
    }

    @Test func readMultipleAndVariable() throws {
        var db = try heraldDatabase()
        let d = try db.addCharacteristic(BluetoothUUID(uuid16: 0xDD02), properties: .read, permissions: .read,
                                         value: .dynamic(id: 2)).value
        var h = ServerHarness(db: db)
        // Appearance (0x0005, two zero octets) then the dynamic "dyn".
        #expect(h.ask("0e 05 00 " + le16(d)) == attHex("0f 00 00 64 79 6e"))
        #expect(h.ask("20 05 00 " + le16(d)) == attHex("21 02 00 00 00 03 00 64 79 6e"))
        // The payload (21 octets) twice overflows MTU 23: cut at MTU-1.
        let r = h.ask("0e 10 00 10 00")
        #expect(r.count == 23 && r[0] == 0x0F)
        let v = h.ask("20 10 00 10 00")
        #expect(v.count == 23 && v[1] == 21 && v[2] == 0)
    }

    @Test func findByTypeValueDiscoversServiceByUUID() throws {
        var h = ServerHarness(db: try heraldDatabase())
        #expect(h.ask("06 01 00 ff ff 00 28 9b fd 5b d6 72 45 1e 80 d3 42 46 47 af 32 81 42") == attHex("07 0e 00 12 00"))
        #expect(h.ask("06 01 00 ff ff 00 28 01 18") == attHex("07 06 00 0d 00"))
        #expect(h.ask("06 07 00 ff ff 00 28 00 18") == attHex("01 06 07 00 0a"))
        // Non-grouping attributes report their own handle as the group end.
        #expect(h.ask("06 01 00 ff ff 00 2a 68 65 72 61 6c 64") == attHex("07 03 00 03 00"))
    }

    @Test func databaseHashMatchesIndependentComputation() throws {
        // Expected values computed with Python's `cryptography` AES-CMAC over the byte stream Part G
        // 7.3.1 defines (handles, types, declaration values), reversed to little-endian.
        var plain = try GATTStandardDatabase(deviceName: Array("x".utf8).span)
        #expect(Self.hashSpan(&plain) == attHex("1fb2c245f82240f72b06c5266375ce16"))
        var h = ServerHarness(db: try heraldDatabase())
        #expect(h.ask("0a 0d 00") == [0x0B] + attHex("66401fd0ae72816d5cbb8cdc3468c1b2"))
        #expect(h.ask("08 01 00 ff ff 2a 2b") == attHex("09 12 0d 00") + attHex("66401fd0ae72816d5cbb8cdc3468c1b2"))
        // Values of characteristics do not count; structure does.
        _ = h.db.setValue(0x10, to: [UInt8(1)].span)
        #expect(h.ask("0a 0d 00") == [0x0B] + attHex("66401fd0ae72816d5cbb8cdc3468c1b2"))
        try h.db.addPrimaryService(BluetoothUUID(uuid16: 0x180F))
        #expect(h.ask("0a 0d 00") != [0x0B] + attHex("66401fd0ae72816d5cbb8cdc3468c1b2"))
    }

    static func hashSpan(_ db: inout GATTStandardDatabase) -> [UInt8] {
        let h = db.databaseHash()
        return (0..<16).map { h[$0] }
    }

    @Test func builderLimits() throws {
        var small = try GATTDatabase<14, 200, 2>(deviceName: Array("n".utf8).span)
        #expect(small.count == 13)
        #expect(throws: GATTDatabaseError.tooManyAttributes) {
            try small.addCharacteristic(BluetoothUUID(uuid16: 1), properties: .read, permissions: .read, value: .dynamic(id: 1))
        }
        var tight = try GATTDatabase<40, 80, 2>(deviceName: Array("n".utf8).span, deviceNameMaxLength: 1)
        try tight.addPrimaryService(BluetoothUUID(uuid16: 0x180F))
        let big = [UInt8](repeating: 0, count: 60)
        #expect(throws: GATTDatabaseError.valueStorageFull) {
            try tight.addCharacteristic(BluetoothUUID(uuid16: 1), properties: .read, permissions: .read,
                                        value: .stored(big.span, maxLength: 60))
        }
        #expect(throws: GATTDatabaseError.valueTooLong) {
            try tight.addCharacteristic(BluetoothUUID(uuid16: 1), properties: .read, permissions: .read,
                                        value: .stored(big.span, maxLength: 513))
        }
        try tight.addPrimaryService(BluetoothUUID(uuid16: 0x180A))
        #expect(throws: GATTDatabaseError.noEnclosingDeclaration) {
            try tight.addDescriptor(BluetoothUUID(uuid16: 0x2901), permissions: .read, value: .dynamic(id: 3))
        }
    }
}
