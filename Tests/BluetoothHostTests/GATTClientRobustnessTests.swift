import Testing
@testable import BluetoothHost

// What a GATT client does when the server is slow, wrong or hostile: typed errors, never a trap.

@Suite struct GATTClientRobustnessTests {
    @Test func transactionTimeoutClosesTheBearer() {
        var c = TestClient()
        _ = c.startBytes(.read(handle: 3), now: 1_000)
        #expect(c.client.nextDeadline == 31_000)  // Part F 3.3.3: 30 s from the request
        #expect(c.client.tick(now: 30_999, delegate: &c.delegate) == .none)
        #expect(c.delegate.completions.isEmpty)
        #expect(c.client.tick(now: 31_000, delegate: &c.delegate) == .disconnect)
        #expect(c.delegate.completions.count == 1 && c.lastError == .timeout && c.delegate.completions.first?.procedure == .read)
        #expect(c.client.isTimedOut && c.client.nextDeadline == nil)
        // Dead bearer: nothing starts, nothing is delivered, nothing is confirmed.
        #expect(c.start(.read(handle: 3), now: 31_001) == ([], .bearerClosed))
        #expect(c.start(.writeWithoutResponse(handle: 3, value: attHex("01").span)) == ([], .bearerClosed))
        #expect(c.feed("0b 01 02", now: 31_002) == (.none, []))
        #expect(c.feed("1d 12 00 01", now: 31_003) == (.none, []))
        #expect(c.client.tick(now: 99_000, delegate: &c.delegate) == .none)
        #expect(c.delegate.completions.count == 1 && c.delegate.reads.isEmpty && c.delegate.indications.isEmpty)
    }

    /// The timer restarts with every request of a multi-request procedure, and a response that comes
    /// in after the deadline (before any tick) is a timeout, not a success.
    @Test func eachRequestHasItsOwnTimer() {
        var c = TestClient()
        _ = c.startBytes(.discoverAllPrimaryServices, now: 0)
        _ = c.feed("11 06 01 00 05 00 00 18", now: 29_000)
        #expect(c.client.nextDeadline == 59_000)
        #expect(c.feed("01 10 06 00 0a", now: 59_000) == (.disconnect, []))
        #expect(c.lastError == .timeout && c.delegate.services.count == 1)
        // Nothing outstanding: no deadline, tick does nothing.
        var idle = TestClient()
        #expect(idle.client.nextDeadline == nil && idle.client.tick(now: 1_000_000, delegate: &idle.delegate) == .none)
    }

    @Test func wrongOpcodeEndsTheProcedure() {
        var c = TestClient()
        _ = c.startBytes(.read(handle: 3))
        #expect(c.feed("13") == (.none, []))  // a Write Response to a Read Request
        #expect(c.lastError == .unexpectedResponse(.writeResponse) && !c.client.isBusy)
        // An Error Response about another request.
        _ = c.startBytes(.read(handle: 3))
        #expect(c.feed("01 12 03 00 03") == (.none, []))
        #expect(c.lastError == .unexpectedErrorResponse(requestOpcode: .writeRequest))
        // An Error Response about ours maps to its code and handle.
        _ = c.startBytes(.read(handle: 3))
        _ = c.feed("01 0a 03 00 02")
        #expect(c.lastError == .attError(.readNotPermitted, handle: 3))
        // The bearer stays usable after each of these.
        _ = c.startBytes(.read(handle: 3))
        _ = c.feed("0b 01")
        #expect(c.lastError == nil && c.delegate.completions.count == 4)
    }

    @Test func unsolicitedAndServerBoundPDUsAreIgnored() {
        var c = TestClient()
        #expect(c.feed("0b 01 02") == (.none, []))
        #expect(c.feed("01 0a 03 00 02") == (.none, []))
        #expect(c.client.unsolicitedResponses == 2)
        #expect(c.feed("0a 03 00") == (.none, []))  // a Read Request: the server's business
        #expect(c.feed("52 03 00 01") == (.none, []))
        #expect(c.feed([]) == (.none, []))
        #expect(c.client.ignoredPDUs == 3 && c.delegate.completions.isEmpty && c.delegate.reads.isEmpty)
    }

    /// Truncated or inconsistent responses to every procedure: a typed error each time.
    @Test func truncatedResponsesGiveTypedErrors() {
        let cases: [(GATTProcedureKind, String, GATTClientError)] = [
            (.exchangeMTU, "03 05", .malformed(.truncated(needed: 3, available: 2))),
            (.discoverAllPrimaryServices, "11 06 01 00 05", .malformed(.badLength(field: "Attribute Data List", declared: 3, limit: 6))),
            (.discoverAllPrimaryServices, "11", .malformed(.truncated(needed: 2, available: 1))),
            (.discoverAllPrimaryServices, "11 05 01 00 05 00 00", .invalidResponse),
            (.discoverPrimaryServices, "07 0e 00 12", .malformed(.badLength(field: "Handles Information List", declared: 3, limit: 4))),
            (.discoverAllCharacteristics, "09 07 0e 00 02", .malformed(.badLength(field: "Attribute Data List", declared: 3, limit: 7))),
            (.discoverAllDescriptors, "05 01 03 00", .malformed(.badLength(field: "Find Information data", declared: 2, limit: 4))),
            (.discoverAllDescriptors, "05 03 03 00 02 29", .malformed(.invalidValue(field: "Find Information format", value: 3))),
            (.read, "01 0a 03", .malformed(.truncated(needed: 5, available: 3))),  // the whole PDU's length
            (.write, "13 00", .malformed(.trailingBytes(count: 1))),
        ]
        for (kind, hex, expected) in cases {
            var c = TestClient()
            let started: GATTClientError?
            switch kind {
            case .exchangeMTU: started = c.start(.exchangeMTU).1
            case .discoverAllPrimaryServices: started = c.start(.discoverAllPrimaryServices).1
            case .discoverPrimaryServices: started = c.start(.discoverPrimaryServices(uuid: heraldServiceUUID)).1
            case .discoverAllCharacteristics: started = c.start(.discoverAllCharacteristics(serviceStart: 0x0E, serviceEnd: 0x12)).1
            case .discoverAllDescriptors: started = c.start(.discoverAllDescriptors(start: 3, end: 9)).1
            case .read: started = c.start(.read(handle: 3)).1
            default: started = c.start(.write(handle: 3, value: attHex("01").span)).1
            }
            #expect(started == nil)
            #expect(c.feed(hex) == (.none, []), "\(hex)")
            #expect(c.delegate.completions.count == 1 && c.lastError == expected, "\(hex)")
            #expect(!c.client.isBusy)
        }

        // A truncated Prepare Write Response still cancels the queue before reporting.
        var w = TestClient()
        _ = w.startBytes(.writeLong(handle: 0x12, value: [UInt8](repeating: 7, count: 30).span))
        #expect(w.feed("17 12 00") == (.send, attHex("18 00")))
        _ = w.feed("19")
        #expect(w.lastError == .malformed(.truncated(needed: 5, available: 3)))
        // A Read Response longer than ATT_MTU-1 breaks the MTU.
        var r = TestClient()
        _ = r.startBytes(.read(handle: 3))
        _ = r.feed([0x0B] + [UInt8](repeating: 0, count: 23))
        #expect(r.lastError == .invalidResponse && r.delegate.reads.isEmpty)
    }

    /// Random bytes in every phase of every procedure: the client must never trap, must always come
    /// back to idle or stay consistently busy, and every completion must be reported exactly once.
    @Test func randomResponsesNeverTrap() {
        var rng = SplitMix(seed: 0x6A77)
        let value = (0..<60).map { UInt8($0) }
        for round in 0..<3_000 {
            var c = TestClient()
            let procedure = round % 9
            switch procedure {
            case 0: _ = c.start(.exchangeMTU)
            case 1: _ = c.start(.discoverAllPrimaryServices)
            case 2: _ = c.start(.discoverPrimaryServices(uuid: BluetoothUUID(uuid16: 0x180F)))
            case 3: _ = c.start(.discoverAllCharacteristics(serviceStart: 1, serviceEnd: 0x40))
            case 4: _ = c.start(.discoverAllDescriptors(start: 1, end: 0x40))
            case 5: _ = c.start(.readLong(handle: 3))
            case 6: _ = c.start(.writeLong(handle: 3, value: value.span))
            case 7: _ = c.start(.setClientConfiguration(descriptorHandle: 4, .indication))
            default: _ = c.start(.read(handle: 3))
            }
            for _ in 0..<6 {
                // Mostly the right opcode, so the decoders behind it get exercised too.
                let opcodes: [UInt8] = [0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x11, 0x13, 0x17, 0x19, 0x1B, 0x1D, 0x23]
                var pdu = [opcodes[Int(rng.next() % UInt64(opcodes.count))]]
                for _ in 0..<Int(rng.next() % 30) { pdu.append(UInt8(truncatingIfNeeded: rng.next())) }
                _ = c.feed(pdu)
            }
            #expect(c.delegate.completions.count <= 1)
            if c.delegate.completions.count == 1 { #expect(!c.client.isBusy) }
        }
    }

    /// A delegate that leaves procedures out (`optionalProcedures`): a response of one of them ends
    /// it as invalid without being parsed, and notifications are dropped; indications are confirmed.
    @Test func proceduresLeftOutByTheDelegateAreNotAnswered() {
        var client = GATTClient<0>(maximumMTU: 23)
        var delegate = NarrowGATTDelegate()
        var request = ATTTestSink()
        try? client.start(.discoverAllDescriptors(start: 3, end: 9), now: 0, into: &request)
        var reply = ATTTestSink()
        #expect(client.handle(pdu: attHex("05 01 04 00 02 29").span, now: 1, delegate: &delegate, reply: &reply) == .none)
        #expect(delegate.errors == [.invalidResponse] && delegate.descriptors == 0 && !client.isBusy)
        try? client.start(.discoverPrimaryServices(uuid: BluetoothUUID(uuid16: 0x180F)), now: 2, into: &request)
        #expect(client.handle(pdu: attHex("07 01 00 05 00").span, now: 3, delegate: &delegate, reply: &reply) == .none)
        #expect(delegate.errors == [.invalidResponse, .invalidResponse] && delegate.services == 0)
        #expect(client.handle(pdu: attHex("1b 10 00 aa").span, now: 4, delegate: &delegate, reply: &reply) == .none)
        #expect(client.ignoredPDUs == 1 && delegate.notifications == 0)
        #expect(client.handle(pdu: attHex("1d 12 00 01").span, now: 5, delegate: &delegate, reply: &reply) == .send)
        #expect(reply.bytes == attHex("1e"))
    }
}

/// Runs the reads, writes and full discoveries only, as `HeraldCentralProcedure` does.
struct NarrowGATTDelegate: GATTClientDelegate {
    static var optionalProcedures: GATTClientOptionalProcedures {
        GATTClientOptionalProcedures(discoverServicesByUUID: false, discoverDescriptors: false, notifications: false)
    }
    var errors: [GATTClientError?] = []
    var services = 0, descriptors = 0, notifications = 0
    mutating func gattClientDidDiscover(service: GATTDiscoveredService) { services += 1 }
    mutating func gattClientDidDiscover(descriptor: GATTDiscoveredDescriptor) { descriptors += 1 }
    mutating func gattClientDidReceiveNotification(handle: UInt16, value: Span<UInt8>) { notifications += 1 }
    mutating func gattClientDidComplete(_ procedure: GATTProcedureKind, error: GATTClientError?) { errors.append(error) }
}
