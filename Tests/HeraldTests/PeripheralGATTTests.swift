import Testing
@testable import BluetoothHost
@testable import Herald

/// Every event the peripheral reports, as one line each, so tests compare whole sequences.
struct PeripheralEventLog: HeraldPeripheralDelegate {
    var events: [String] = []
    var links: [String] = []

    mutating func heraldPeripheral(didConnect link: HeraldLink) { links.append("up \(link.handle)") }
    mutating func heraldPeripheral(didDisconnect link: HeraldLink, reason: HCIStatus) {
        links.append("down \(link.handle) \(reason.rawValue)")
    }

    mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink) {
        events.append("served \(link.handle) \(spanHex(payload))")
    }
    mutating func heraldPeripheral(didReceivePayload payload: Span<UInt8>, from link: HeraldLink) {
        events.append("payload \(link.handle) \(spanHex(payload))")
    }
    mutating func heraldPeripheral(didMeasureRSSI rssi: Int16, from link: HeraldLink) {
        events.append("rssi \(link.handle) \(rssi)")
    }
    mutating func heraldPeripheral(didShare payloads: SharedPayloadIterator, rssi: Int16, from link: HeraldLink) {
        var it = payloads
        var parts: [String] = []
        while let p = try? it.next() { parts.append(spanHex(p)) }
        events.append("share \(link.handle) \(rssi) \(parts.joined(separator: ","))")
    }
    mutating func heraldPeripheral(didReceiveImmediateSend data: Span<UInt8>, from link: HeraldLink) {
        events.append("immediate \(link.handle) \(spanHex(data))")
    }
    mutating func heraldPeripheral(didKeepAwake link: HeraldLink) { events.append("awake \(link.handle)") }
    mutating func heraldPeripheral(didRejectSignalWrite fragment: Span<UInt8>, from link: HeraldLink) {
        events.append("reject \(link.handle) \(spanHex(fragment))")
    }
    mutating func heraldPeripheral(didChangeAddress address: BDAddress, unixMillis: Int64) {
        events.append("address \(hexString(bytes(address.bytes)))")
    }
    mutating func heraldPeripheral(commandFailed opcode: HCIOpcode, status: HCIStatus) {
        events.append("failed \(opcode.rawValue) \(status.rawValue)")
    }
}

func spanHex(_ s: Span<UInt8>) -> String { hexString((0..<s.count).map { s[$0] }) }

/// A source whose payload changes on every call, to show what the per-link snapshot holds.
struct CountingSource: HeraldPayloadSource {
    var calls = 0
    mutating func writePayload<S: ByteSink>(at time: Int64, to sink: inout S) -> Bool {
        calls += 1
        for i in 0..<40 { sink.append(UInt8(truncatingIfNeeded: calls &* 16 &+ i)) }
        return true
    }
}

let testSecretKey: [UInt8] = (0..<2048).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
/// 2026-04-10T00:00:00Z + 100 periods + 350 s: day 99, period 100, 10 s before period 101.
let testUnixMillis: Int64 = (KeyEpoch.standard.unixSeconds + 99 * 86_400 + 100 * 360 + 350) * 1_000

/// A peripheral application behind a real ATT server and GATT database, two links, no controller.
struct PeripheralHarness<Source: HeraldPayloadSource> {
    typealias App = HeraldPeripheralApplication<Source, PeripheralEventLog, 2, 128, 600, StandardServerOffer>
    var app: App
    var db: GATTDatabase<32, 256, 2>
    let server = ATTServer(maximumMTU: 247)
    /// Each link's bearer, by handle.
    var bearers: [UInt16: ATTStandardBearer] = [:]
    /// The stack's connection table this harness plays: it numbers the links (the database keeps
    /// their CCCDs there); the server is given each link by its handle (`serverLink(handle:)`).
    var links = StackLinks()
    var control = StackControl()
    var handles: HeraldGATTHandles
    var now: UInt64 = 0

    init(source: Source, unixMillisAtZero: Int64 = testUnixMillis, irk: InlineArray<16, UInt8>? = nil) throws {
        var p = try HeraldPeripheral<Source, StandardServerOffer, 2, 128, 600>(
            source: source, advertising: HeraldAdvertisingConfiguration(irk: irk), clock: HeraldClock(unixMillisAtZero: unixMillisAtZero))
        db = try GATTDatabase<32, 256, 2>(deviceName: Array("herald".utf8).span)
        try p.install(into: &db)
        handles = try #require(p.handles)
        app = App(peripheral: p, delegate: PeripheralEventLog())
        app.stackDidBecomeReady(ControllerInfo(), now: now, control: &control)
    }

    var events: [String] { app.delegate.events }

    mutating func connect(_ handle: UInt16, stackSlot: Int? = nil) {
        // As the stack does: the link takes an entry of the stack's table (the first free one unless
        // the test says otherwise), where its CCCDs live; the application is told its handle only.
        links.insert(handle, at: stackSlot)
        bearers[handle] = ATTStandardBearer()
        let summary = ConnectionSummary(handle: handle, role: .peripheral,
                                        peer: DeviceAddress(type: .randomDevice, address: BDAddress(bytes: [1, 2, 3, 4, 5, UInt8(handle)])),
                                        timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 72))
        app.stackDidConnect(summary, now: now, control: &control)
    }

    mutating func disconnect(_ handle: UInt16) {
        links.remove(handle)
        app.stackDidDisconnect(handle: handle, reason: .remoteUserTerminated, now: now, control: &control)
    }

    /// Runs the application's timers up to `time`.
    mutating func advance(to time: UInt64) {
        while let d = app.applicationDeadline, d <= time {
            now = max(now, d)
            app.stackTimerFired(now: now, control: &control)
        }
        now = time
    }

    /// One ATT PDU from the central on link `handle`; the response bytes. The server is given the
    /// link as the stack's table names it, as `LEStack.serveATT` gives it (a PDU comes only on a
    /// link the stack holds: one the test never connected is put in the table, not reported).
    mutating func send(_ pdu: [UInt8], link handle: UInt16 = 0x0040) -> [UInt8] {
        let link = links.link(handle)
        var out = ArraySink()
        var bearer = bearers[handle] ?? ATTStandardBearer()
        _ = server.handle(pdu: pdu.span, bearer: &bearer, link: link,
                          now: now, database: &db, delegate: &app, response: &out)
        bearers[handle] = bearer
        return out.bytes
    }

    func le(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }

    mutating func read(link: UInt16 = 0x0040) -> [UInt8] { send([0x0A] + le(handles.payload.value), link: link) }
    mutating func readBlob(offset: UInt16, link: UInt16 = 0x0040) -> [UInt8] {
        send([0x0C] + le(handles.payload.value) + le(offset), link: link)
    }
    mutating func writeSignal(_ value: [UInt8], link: UInt16 = 0x0040) -> [UInt8] {
        send([0x12] + le(handles.signal.value) + value, link: link)
    }
}

@Suite struct PeripheralGATTTests {
    func simpleSource() throws -> SimplePayloadDataSupplier<InlineSecretKey> {
        try SimplePayloadDataSupplier(secretKey: testSecretKey.span,
                                      header: PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 7))
    }

    func identifier(day: Int, period: Int) throws -> [UInt8] {
        let key = SimpleKeySchedule.matchingKey(secretKey: testSecretKey.span, day: day)
        let mk = try #require(key)
        return bytes(try #require(SimpleKeySchedule.contactIdentifier(matchingKey: mk, period: period)))
    }

    @Test func readServesTheSimplePayloadForTheCurrentPeriod() throws {
        var h = try PeripheralHarness(source: try simpleSource())
        h.connect(0x0040)
        let response = h.read()
        #expect(response.first == 0x0B)
        let payload = Array(response.dropFirst())
        // 0x10, country 826 and state 7 big-endian, then day 99 period 100's identifier.
        #expect(payload == hex("10 033a 0007") + (try identifier(day: 99, period: 100)))
        #expect(h.events == ["served 64 \(hexString(payload))"])
    }

    @Test func longPayloadReadInPiecesComesFromOneSnapshotPerLink() throws {
        var h = try PeripheralHarness(source: CountingSource())
        h.connect(0x0040)
        h.connect(0x0041)
        // ATT_MTU 23: a Read returns 22 octets, Read Blob continues from there (Part F 3.4.4.5).
        let first = h.read()
        let second = h.readBlob(offset: 22)
        let tail = h.readBlob(offset: 40)
        #expect(first.first == 0x0B && first.count == 23)
        #expect(second.first == 0x0D && second.count == 19)
        #expect(tail == [0x0D])
        let whole = Array(first.dropFirst() + second.dropFirst())
        #expect(whole == (0..<40).map { UInt8(16 + $0) }, "both pieces come from the first call's value")
        // Past the end: Invalid Offset (0x07).
        #expect(h.readBlob(offset: 41) == [0x01, 0x0C] + h.le(h.handles.payload.value) + [0x07])
        // A second link gets its own value; the first keeps its own.
        let other = Array(h.read(link: 0x0041).dropFirst())
        #expect(other == (0..<22).map { UInt8(32 + $0) })
        #expect(Array(h.read(link: 0x0040).dropFirst()) == Array(whole.prefix(22)))
        #expect(h.app.peripheral.source.calls == 2)
    }

    @Test func readBlobWithoutAReadStillTakesASnapshot() throws {
        var h = try PeripheralHarness(source: CountingSource())
        h.connect(0x0040)
        #expect(Array(h.readBlob(offset: 30).dropFirst()) == (30..<40).map { UInt8(16 + $0) })
        #expect(Array(h.read().dropFirst()) == (0..<22).map { UInt8(16 + $0) })
        #expect(h.app.peripheral.source.calls == 1)
    }

    @Test func aLinkKeepsItsPayloadAcrossTheBoundaryWhileNewLinksGetTheNextOne() throws {
        var h = try PeripheralHarness(source: try simpleSource())
        h.connect(0x0040)
        let before = Array(h.read().dropFirst())
        #expect(Array(before.suffix(16)) == (try identifier(day: 99, period: 100)))
        h.advance(to: 11_000)  // 1 s into period 101
        #expect(Array(h.read().dropFirst()) == before, "same link: same identifier, periods stay unlinkable")
        h.connect(0x0041)
        let after = Array(h.read(link: 0x0041).dropFirst())
        #expect(Array(after.suffix(16)) == (try identifier(day: 99, period: 101)))
        // The entry is reused after a disconnect and starts without a snapshot.
        h.disconnect(0x0040)
        h.connect(0x0042)
        #expect(Array(h.read(link: 0x0042).dropFirst()) == after)
        #expect(h.app.delegate.links == ["up 64", "up 65", "down 64 19", "up 66"])
    }

    @Test func noPayloadOutsideTheKeyScheduleIsAnErrorNotZeros() throws {
        var h = try PeripheralHarness(source: try simpleSource(), unixMillisAtZero: (KeyEpoch.standard.unixSeconds - 10) * 1_000)
        h.connect(0x0040)
        #expect(h.read() == [0x01, 0x0A] + h.le(h.handles.payload.value) + [0x0E])
        #expect(h.events.isEmpty)
    }

    @Test func venueBeaconPayloadIsServedWhole() throws {
        var name = ArraySink()
        try ExtendedDataWriter.append(code: ExtendedDataCode.premisesName, text: "Café Herald, 1 High Street", to: &name)
        let source = try FixedPayloadSource<128>.venueBeacon(
            header: PayloadHeader(protocolAndVersion: 0x30, countryCode: 826, stateCode: 3), locationCode: 0x0102_0304,
            extendedData: name.bytes.span)
        var h = try PeripheralHarness(source: source)
        h.connect(0x0040)
        _ = h.send(hex("02 f700"))  // Exchange MTU 247: the whole payload in one Read
        let payload = Array(h.read().dropFirst())
        #expect(payload == hex("30 033a 0003 01020304") + name.bytes)
        let parsed = try payload.withUnsafeBufferPointer { b throws(DecodeError) in
            let v = try VenueBeaconPayload(parsing: Span(_unsafeElements: b))
            return (v.header.countryCode, v.locationCode, v.extendedData.count)
        }
        #expect(parsed.0 == 826 && parsed.1 == 0x0102_0304 && parsed.2 == name.bytes.count)
    }

    @Test func payloadSourceLimitsAreEnforced() throws {
        #expect(throws: DecodeError.badLength(field: "secret key", declared: 16, limit: 2048)) {
            _ = try SimplePayloadDataSupplier(secretKey: [UInt8](repeating: 1, count: 16).span,
                                        header: PayloadHeader(protocolAndVersion: 0x10, countryCode: 0, stateCode: 0))
        }
        #expect(throws: DecodeError.self) {
            _ = try FixedPayloadSource<8>.venueBeacon(header: PayloadHeader(protocolAndVersion: 0x30, countryCode: 0, stateCode: 0),
                                                      locationCode: 1)
        }
        #expect(throws: DecodeError.unexpectedCode(field: "beacon payload protocol/version", value: 0x10)) {
            _ = try FixedPayloadSource<64>.venueBeacon(header: PayloadHeader(protocolAndVersion: 0x10, countryCode: 0, stateCode: 0),
                                                       locationCode: 1)
        }
        let test = try FixedPayloadSource<21>.simpleTest(header: PayloadHeader(protocolAndVersion: 0x10, countryCode: 1, stateCode: 2),
                                                        contactIdentifier: inline16((0..<16).map { UInt8($0) }))
        #expect(spanHex(test.payload.span) == "1000010002" + "000102030405060708090a0b0c0d0e0f")
    }
}
