import Testing
@testable import BluetoothHost

// The GATT client against scripted server responses. Hex literals marked "capture" are ATT payloads
// (CID 4) from ../shared/captures (beside the repository)/herald-central-reads-phone.btsnoop, a Bumble central discovering
// and reading a Bumble Herald peripheral at MTU 247 (frame numbers given): the client must send
// byte-for-byte what Bumble sent and understand what Bumble's server answered.

/// Records everything a client reports (tests may allocate; the core may not).
struct RecordingGATTDelegate: GATTClientDelegate {
    var mtus: [UInt16] = []
    var services: [GATTDiscoveredService] = []
    var characteristics: [GATTDiscoveredCharacteristic] = []
    var descriptors: [GATTDiscoveredDescriptor] = []
    var reads: [(handle: UInt16, offset: Int, value: [UInt8])] = []
    var notifications: [(handle: UInt16, value: [UInt8])] = []
    var indications: [(handle: UInt16, value: [UInt8])] = []
    var completions: [(procedure: GATTProcedureKind, error: GATTClientError?)] = []
    /// Set by a test: the delegate says it has what it needs (the client stops discovering).
    var foundWhatItNeeds = false
    var gattClientHasFoundWhatItNeeds: Bool { foundWhatItNeeds }

    mutating func gattClientDidExchangeMTU(_ mtu: UInt16) { mtus.append(mtu) }
    mutating func gattClientDidDiscover(service: GATTDiscoveredService) { services.append(service) }
    mutating func gattClientDidDiscover(characteristic: GATTDiscoveredCharacteristic) { characteristics.append(characteristic) }
    mutating func gattClientDidDiscover(descriptor: GATTDiscoveredDescriptor) { descriptors.append(descriptor) }
    mutating func gattClientDidRead(handle: UInt16, offset: Int, value: Span<UInt8>) {
        reads.append((handle, offset, attArray(value)))
    }
    mutating func gattClientDidReceiveNotification(handle: UInt16, value: Span<UInt8>) {
        notifications.append((handle, attArray(value)))
    }
    mutating func gattClientDidReceiveIndication(handle: UInt16, value: Span<UInt8>) {
        indications.append((handle, attArray(value)))
    }
    mutating func gattClientDidComplete(_ procedure: GATTProcedureKind, error: GATTClientError?) {
        completions.append((procedure, error))
    }

    /// The value a long read delivered, assembled at the offsets given.
    var assembled: [UInt8] {
        var out: [UInt8] = []
        for r in reads {
            if out.count < r.offset + r.value.count { out += [UInt8](repeating: 0, count: r.offset + r.value.count - out.count) }
            for (i, b) in r.value.enumerated() { out[r.offset + i] = b }
        }
        return out
    }
}

/// A client plus its delegate, driven with hex strings.
struct ScriptedClient<let N: Int> {
    var client: GATTClient<N>
    var delegate = RecordingGATTDelegate()
    init(maximumMTU: UInt16 = 247) { client = GATTClient<N>(maximumMTU: maximumMTU) }

    /// Starts `procedure`; returns the request bytes (empty if it threw) and the error.
    mutating func start(_ procedure: borrowing GATTProcedure, now: UInt64 = 0) -> ([UInt8], GATTClientError?) {
        var sink = ATTTestSink()
        do throws(GATTClientError) {
            try client.start(procedure, now: now, into: &sink)
            return (sink.bytes, nil)
        } catch { return (sink.bytes, error) }
    }

    mutating func startBytes(_ procedure: borrowing GATTProcedure, now: UInt64 = 0) -> [UInt8] { start(procedure, now: now).0 }

    /// Feeds one PDU from the server; returns the action and the reply bytes.
    mutating func feed(_ bytes: [UInt8], now: UInt64 = 0) -> (GATTClientAction, [UInt8]) {
        var sink = ATTTestSink()
        let action = client.handle(pdu: bytes.span, now: now, delegate: &delegate, reply: &sink)
        return (action, sink.bytes)
    }

    mutating func feed(_ hex: String, now: UInt64 = 0) -> (GATTClientAction, [UInt8]) { feed(attHex(hex), now: now) }

    var lastError: GATTClientError? { delegate.completions.last?.error }
}

typealias TestClient = ScriptedClient<512>

// The Herald UUIDs used here are shared with the server tests (GATTServerTestSupport.swift).

@Suite struct GATTClientCaptureTests {
    /// The whole central exchange of the capture: MTU 247, discovery of the Herald service and its two
    /// characteristics, then the payload read.
    @Test func replaysBumbleCentral() {
        var c = TestClient()
        #expect(c.startBytes(.exchangeMTU) == attHex("02 f7 00"))  // capture frame 40
        #expect(c.feed("03 05 02") == (.none, []))  // frame 42: server Rx MTU 517
        #expect(c.client.mtu == 247 && c.delegate.mtus == [247])

        #expect(c.startBytes(.discoverAllPrimaryServices) == attHex("10 01 00 ff ff 00 28"))  // frame 43
        #expect(c.feed("11 06 01 00 05 00 00 18 06 00 0d 00 01 18") == (.send, attHex("10 0e 00 ff ff 00 28")))  // 45 → 46
        #expect(c.feed("11 14 0e 00 12 00 9b fd 5b d6 72 45 1e 80 d3 42 46 47 af 32 81 42") ==
                (.send, attHex("10 13 00 ff ff 00 28")))  // 48 → 49
        #expect(c.feed("01 10 13 00 0a") == (.none, []))  // frame 51: Attribute Not Found ends discovery
        #expect(c.delegate.services == [
            GATTDiscoveredService(startHandle: 0x01, endHandle: 0x05, uuid: BluetoothUUID(uuid16: 0x1800)),
            GATTDiscoveredService(startHandle: 0x06, endHandle: 0x0D, uuid: BluetoothUUID(uuid16: 0x1801)),
            GATTDiscoveredService(startHandle: 0x0E, endHandle: 0x12, uuid: heraldServiceUUID),
        ])

        #expect(c.startBytes(.discoverAllCharacteristics(serviceStart: 0x0E, serviceEnd: 0x12)) ==
                attHex("08 0e 00 12 00 03 28"))  // frame 52
        let frame54 = "09 15 0f 00 02 10 00 e7 33 89 8f e3 43 21 a1 29 48 05 8f f8 c0 98 3e"
            + "11 00 08 12 00 11 1a 82 80 9a e0 24 83 7a 43 2e 09 13 b8 17 f6"
        // Bumble asked again from 0x12 (frame 55) and got Attribute Not Found (57). The last value is
        // at the service's end, so no other characteristic fits (Part G 3.3.1): we stop here.
        #expect(c.feed(frame54) == (.none, []))
        #expect(c.delegate.characteristics == [
            GATTDiscoveredCharacteristic(declarationHandle: 0x0F, properties: .read, valueHandle: 0x10, uuid: heraldPayloadUUID),
            GATTDiscoveredCharacteristic(declarationHandle: 0x11, properties: .write, valueHandle: 0x12, uuid: heraldSignalUUID),
        ])

        #expect(c.startBytes(.read(handle: 0x10)) == attHex("0a 10 00"))  // frame 58
        #expect(c.feed("0b 10 03 3a 00 01" + String(repeating: "5a", count: 16)) == (.none, []))  // frame 60
        #expect(c.delegate.reads.count == 1)
        #expect(c.delegate.reads.first?.offset == 0 && c.delegate.reads.first?.handle == 0x10)
        #expect(c.delegate.reads.first?.value == attHex("10 03 3a 00 01") + [UInt8](repeating: 0x5A, count: 16))

        let kinds = c.delegate.completions.map(\.procedure)
        #expect(kinds == [.exchangeMTU, .discoverAllPrimaryServices, .discoverAllCharacteristics, .read])
        #expect(c.delegate.completions.allSatisfy { $0.error == nil })
        #expect(!c.client.isBusy && c.client.unsolicitedResponses == 0)
    }

    /// Find the Herald service by its UUID: the request carries the 128-bit value, the response only handles.
    @Test func discoverHeraldServiceByUUID() {
        var c = TestClient()
        #expect(c.startBytes(.discoverPrimaryServices(uuid: heraldServiceUUID)) ==
                attHex("06 01 00 ff ff 00 28 9b fd 5b d6 72 45 1e 80 d3 42 46 47 af 32 81 42"))
        #expect(c.feed("07 0e 00 12 00") == (.send, attHex("06 13 00 ff ff 00 28 9b fd 5b d6 72 45 1e 80 d3 42 46 47 af 32 81 42")))
        #expect(c.feed("01 06 13 00 0a") == (.none, []))
        #expect(c.delegate.services == [GATTDiscoveredService(startHandle: 0x0E, endHandle: 0x12, uuid: heraldServiceUUID)])
        #expect(c.delegate.completions.count == 1 && c.lastError == nil)

        // A 16-bit UUID goes in two octets, even when given in its 128-bit form (Part G 3.1).
        var d = TestClient()
        let full = BluetoothUUID("00001801-0000-1000-8000-00805f9b34fb")!
        #expect(d.startBytes(.discoverPrimaryServices(uuid: full)) == attHex("06 01 00 ff ff 00 28 01 18"))
        // A group ending at 0xFFFF ends discovery without another request.
        #expect(d.feed("07 06 00 ff ff") == (.none, []))
        #expect(d.delegate.services.first?.endHandle == 0xFFFF && d.lastError == nil)
    }

    /// A delegate that has found what it needs ends a discovery after the response in hand, as a
    /// success (Part G 4.4.1, 4.6.1 permit ending early); one that has not asks for the rest.
    @Test func aDelegateThatHasWhatItNeedsEndsDiscoveryEarly() {
        var c = TestClient()
        _ = c.startBytes(.discoverAllPrimaryServices)
        c.delegate.foundWhatItNeeds = true
        #expect(c.feed("11 06 01 00 05 00 00 18 06 00 0d 00 01 18") == (.none, []))
        #expect(c.delegate.services.count == 2 && c.delegate.completions.count == 1 && c.lastError == nil)

        var d = TestClient()
        _ = d.startBytes(.discoverAllCharacteristics(serviceStart: 0x0E, serviceEnd: 0x20))
        #expect(d.feed("09 07 0f 00 02 10 00 2a 00") == (.send, attHex("08 10 00 20 00 03 28")))
        d.delegate.foundWhatItNeeds = true
        #expect(d.feed("09 07 11 00 02 12 00 2b 00") == (.none, []))
        #expect(d.delegate.characteristics.count == 2 && d.lastError == nil)
    }

    /// Characteristics: a value at the range's last handle or the one before leaves no room for another
    /// declaration and its value (Part G 3.3.1), so no request is sent that could only find nothing.
    @Test func characteristicDiscoveryStopsWhenNoOtherCanFit() {
        var c = TestClient()
        _ = c.startBytes(.discoverAllCharacteristics(serviceStart: 0x0E, serviceEnd: 0x13))
        // Value at 0x12, one handle before the end (a descriptor may be at 0x13, a characteristic not).
        #expect(c.feed("09 07 11 00 02 12 00 2a 00") == (.none, []))
        var d = TestClient()
        _ = d.startBytes(.discoverAllCharacteristics(serviceStart: 0x0E, serviceEnd: 0x14))
        // Value at 0x12, two before the end: a declaration at 0x13 with its value at 0x14 still fits.
        #expect(d.feed("09 07 11 00 02 12 00 2a 00") == (.send, attHex("08 12 00 14 00 03 28")))
    }
}

@Suite struct GATTClientProcedureTests {
    @Test func exchangeMTUChoosesTheSmallerAndNeverBelow23() {
        var a = TestClient(maximumMTU: 100)
        #expect(a.startBytes(.exchangeMTU) == attHex("02 64 00"))
        _ = a.feed("03 f7 00")
        #expect(a.client.mtu == 100)
        // Only once per connection (Part F 3.4.2.1).
        #expect(a.start(.exchangeMTU).1 == .invalidParameter)

        var b = TestClient()
        _ = b.startBytes(.exchangeMTU)
        _ = b.feed("03 10 00")  // a server claiming 16 still gets 23
        #expect(b.client.mtu == 23 && b.delegate.mtus == [23])

        var c = TestClient()
        _ = c.startBytes(.exchangeMTU)
        _ = c.feed("01 02 00 00 06")  // Request Not Supported
        #expect(c.client.mtu == 23 && c.lastError == .attError(.requestNotSupported, handle: 0))
    }

    @Test func descriptorDiscoveryWalksTheRange() {
        var c = TestClient()
        #expect(c.startBytes(.discoverAllDescriptors(start: 0x11, end: 0x14)) == attHex("04 11 00 14 00"))
        #expect(c.feed("05 01 11 00 02 29 12 00 01 29") == (.send, attHex("04 13 00 14 00")))
        // A 128-bit descriptor, then the last handle of the range: done without Attribute Not Found.
        #expect(c.feed("05 02 14 00 11 1a 82 80 9a e0 24 83 7a 43 2e 09 13 b8 17 f6") == (.none, []))
        #expect(c.delegate.descriptors == [
            GATTDiscoveredDescriptor(handle: 0x11, type: BluetoothUUID(uuid16: 0x2902)),
            GATTDiscoveredDescriptor(handle: 0x12, type: BluetoothUUID(uuid16: 0x2901)),
            GATTDiscoveredDescriptor(handle: 0x14, type: heraldSignalUUID),
        ])
        #expect(c.lastError == nil)
        // An empty range has no descriptors to ask for.
        #expect(c.start(.discoverAllDescriptors(start: 0x15, end: 0x14)) == ([], .invalidParameter))
        #expect(c.start(.discoverAllCharacteristics(serviceStart: 0, serviceEnd: 4)) == ([], .invalidParameter))
    }

    @Test func discoveryRejectsEntriesThatDoNotAdvance() {
        var c = TestClient()
        _ = c.startBytes(.discoverAllPrimaryServices)
        _ = c.feed("11 06 01 00 05 00 00 18")
        // A second response starting inside the first group would loop forever if accepted.
        #expect(c.feed("11 06 03 00 09 00 01 18") == (.none, []))
        #expect(c.lastError == .invalidResponse && c.delegate.services.count == 1)

        var d = TestClient()
        _ = d.startBytes(.discoverAllCharacteristics(serviceStart: 0x0E, serviceEnd: 0x12))
        #expect(d.feed("09 07 20 00 02 21 00 00 2a") == (.none, []))  // declaration past the service end
        #expect(d.lastError == .invalidResponse && d.delegate.characteristics.isEmpty)

        var e = TestClient()
        _ = e.startBytes(.discoverAllCharacteristics(serviceStart: 0x0E, serviceEnd: 0x12))
        #expect(e.feed("09 05 0f 00 02 10 00") == (.none, []))  // 3-octet value: not a declaration
        #expect(e.lastError == .invalidResponse)
    }

    @Test func readLongStopsOnShortChunkOrAttributeNotLong() {
        var c = TestClient()  // MTU 23: full chunks are 22 octets
        let chunk = (0..<22).map { UInt8($0) }
        #expect(c.startBytes(.readLong(handle: 3)) == attHex("0a 03 00"))
        #expect(c.feed([0x0B] + chunk) == (.send, attHex("0c 03 00 16 00")))
        // A value of exactly 44 octets: the Read Blob at offset 44 gets an empty response, which ends it.
        #expect(c.feed([0x0D] + chunk) == (.send, attHex("0c 03 00 2c 00")))
        #expect(c.feed("0d") == (.none, []))
        #expect(c.delegate.reads.map(\.offset) == [0, 22, 44] && c.delegate.assembled == chunk + chunk)
        #expect(c.lastError == nil)

        var d = TestClient()
        _ = d.startBytes(.readLong(handle: 3))
        _ = d.feed([0x0B] + chunk)
        #expect(d.feed("01 0c 03 00 0b") == (.none, []))  // Part G 4.8.3
        #expect(d.lastError == nil && d.delegate.assembled == chunk)

        // A plain read never continues, even with a full response.
        var e = TestClient()
        _ = e.startBytes(.read(handle: 3))
        #expect(e.feed([0x0B] + chunk) == (.none, []))
        #expect(e.lastError == nil && e.delegate.completions.first?.procedure == .read)
    }

    /// A server that never sends a short chunk cannot keep the client reading past 512 octets.
    @Test func readLongCannotExceed512Octets() {
        var c = TestClient()
        let chunk = [UInt8](repeating: 0xAB, count: 22)
        _ = c.startBytes(.readLong(handle: 3))
        var action = c.feed([0x0B] + chunk).0
        var blobs = 0
        while action == .send, blobs < 100 {
            action = c.feed([0x0D] + chunk).0
            blobs += 1
        }
        #expect(blobs == 23)  // offsets 22...506; the chunk at 506 would end at 528
        #expect(c.lastError == .invalidResponse && c.delegate.assembled.count == 506)
    }

    @Test func writesAndClientConfiguration() {
        var c = TestClient()
        #expect(c.startBytes(.write(handle: 0x12, value: attHex("10 03 3a").span)) == attHex("12 12 00 10 03 3a"))
        #expect(c.feed("13") == (.none, []))
        #expect(c.delegate.completions.last?.procedure == .write && c.lastError == nil)

        #expect(c.startBytes(.setClientConfiguration(descriptorHandle: 0x11, .notification)) == attHex("12 11 00 01 00"))
        _ = c.feed("13")
        #expect(c.startBytes(.setClientConfiguration(descriptorHandle: 0x11, .indication)) == attHex("12 11 00 02 00"))
        _ = c.feed("01 12 11 00 fd")  // CCCD Improperly Configured
        #expect(c.lastError == .attError(.cccdImproperlyConfigured, handle: 0x11))
        #expect(c.startBytes(.setClientConfiguration(descriptorHandle: 0x11, .none)) == attHex("12 11 00 00 00"))
        _ = c.feed("13")
        #expect(c.delegate.completions.map(\.procedure) == [.write, .setClientConfiguration, .setClientConfiguration, .setClientConfiguration])

        // ATT_MTU-3 is the most a write carries.
        let long = [UInt8](repeating: 1, count: 21)
        #expect(c.start(.write(handle: 0x12, value: long.span)) == ([], .valueTooLong(length: 21, limit: 20)))
        #expect(c.start(.writeWithoutResponse(handle: 0x12, value: long.span)) == ([], .valueTooLong(length: 21, limit: 20)))
        #expect(c.start(.read(handle: 0)) == ([], .invalidParameter))
    }

    @Test func writeWithoutResponseIsAllowedWhileBusy() {
        var c = TestClient()
        #expect(c.client.currentProcedure == nil)
        _ = c.startBytes(.read(handle: 3))
        #expect(c.client.currentProcedure == .read)
        #expect(c.start(.write(handle: 4, value: attHex("01").span)) == ([], .busy))
        #expect(c.start(.readLong(handle: 4)) == ([], .busy))
        #expect(c.start(.writeWithoutResponse(handle: 0x12, value: attHex("ca fe 01").span)) == (attHex("52 12 00 ca fe 01"), nil))
        _ = c.feed("0b 01")
        #expect(c.delegate.completions.count == 1 && c.delegate.reads.first?.handle == 3)
    }

    @Test func longWriteInMTUMinus5Chunks() {
        var c = TestClient()
        let value = (0..<40).map { UInt8($0) }
        let first = c.startBytes(.writeLong(handle: 0x12, value: value.span))
        #expect(first == attHex("16 12 00 00 00") + value[0..<18])
        #expect(c.feed([0x17] + first.dropFirst()) == (.send, attHex("16 12 00 12 00") + value[18..<36]))
        #expect(c.feed(attHex("17 12 00 12 00") + value[18..<36]) == (.send, attHex("16 12 00 24 00") + value[36..<40]))
        #expect(c.feed(attHex("17 12 00 24 00") + value[36..<40]) == (.send, attHex("18 01")))
        #expect(c.feed("19") == (.none, []))
        #expect(c.delegate.completions.count == 1 && c.delegate.completions.first?.procedure == .writeLong && c.lastError == nil)

        // Values the buffer (or ATT) cannot hold are refused before anything is sent.
        var small = ScriptedClient<16>()
        #expect(small.start(.writeLong(handle: 3, value: value.span)) == ([], .valueTooLong(length: 40, limit: 16)))
        #expect(c.start(.writeLong(handle: 3, value: [UInt8](repeating: 0, count: 513).span)) == ([], .valueTooLong(length: 513, limit: 512)))
        #expect(c.start(.writeLong(handle: 3, value: [UInt8]().span)) == ([], .invalidParameter))
    }

    @Test func longWriteEchoMismatchCancels() {
        let value = (0..<40).map { UInt8($0) }
        var echo = attHex("17 12 00 00 00") + value[0..<18]
        echo[10] ^= 0xFF  // one value octet changed in transit
        var c = TestClient()
        _ = c.startBytes(.writeLong(handle: 0x12, value: value.span))
        #expect(c.feed(echo) == (.send, attHex("18 00")))  // Execute Write, cancel
        #expect(c.client.isBusy && c.delegate.completions.isEmpty)
        #expect(c.feed("19") == (.none, []))
        #expect(c.delegate.completions.count == 1 && c.lastError == .prepareWriteMismatch(offset: 0))

        // The right bytes echoed at the wrong offset are a mismatch too.
        var d = TestClient()
        let firstRequest = d.startBytes(.writeLong(handle: 0x12, value: value.span))
        _ = d.feed([0x17] + firstRequest.dropFirst())
        #expect(d.feed(attHex("17 12 00 13 00") + value[18..<36]) == (.send, attHex("18 00")))
        _ = d.feed("01 18 12 00 0e")  // even if the cancel itself fails, the mismatch is what is reported
        #expect(d.lastError == .prepareWriteMismatch(offset: 18))

        // An error on a prepare also cancels what was queued, then reports the error.
        var e = TestClient()
        _ = e.startBytes(.writeLong(handle: 0x12, value: value.span))
        #expect(e.feed("01 16 12 00 09") == (.send, attHex("18 00")))
        _ = e.feed("19")
        #expect(e.lastError == .attError(.prepareQueueFull, handle: 0x12))
    }

    @Test func notificationsAndIndications() {
        var c = TestClient()
        #expect(c.feed("1b 10 00 aa bb") == (.none, []))
        #expect(c.feed("1d 12 00 01 02 03") == (.send, attHex("1e")))  // confirmation, automatically
        #expect(c.feed("23 10 00 02 00 aa bb 12 00 01 00 cc") == (.none, []))
        #expect(c.delegate.notifications.map(\.handle) == [0x10, 0x10, 0x12])
        #expect(c.delegate.notifications.map(\.value) == [[0xAA, 0xBB], [0xAA, 0xBB], [0xCC]])
        #expect(c.delegate.indications.count == 1 && c.delegate.indications.first?.value == [1, 2, 3])

        // An indication during a procedure is confirmed without disturbing it.
        _ = c.startBytes(.read(handle: 3))
        #expect(c.feed("1d 12 00 09") == (.send, attHex("1e")))
        #expect(c.client.isBusy)
        _ = c.feed("0b 07")
        #expect(c.delegate.reads.first?.value == [7] && c.lastError == nil)

        // Malformed ones are dropped and counted, never delivered, never confirmed.
        #expect(c.feed("1b 10") == (.none, []))
        #expect(c.feed("1d") == (.none, []))
        #expect(c.feed("23 10 00 05 00 aa") == (.none, []))
        #expect(c.client.ignoredPDUs == 3 && c.delegate.notifications.count == 3 && c.delegate.indications.count == 2)
    }
}
