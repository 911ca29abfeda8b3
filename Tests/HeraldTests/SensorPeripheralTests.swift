import Testing
@testable import BluetoothHost
@testable import Herald

/// The sensor with the real Herald peripheral composed in, behind an ATT server and GATT database:
/// writes to our signal characteristic become sensor events for the writer's target, and reads of
/// our payload characteristic are served.
@Suite("Sensor with the Herald peripheral")
struct SensorPeripheralTests {
    /// The peripheral has no payload source of its own: it serves the sensor's supplier.
    typealias Peripheral = HeraldPeripheral<NoPayloadSource, StandardServerOffer, 2, 128, 600>
    typealias Sensor = HeraldSensor<FixedPayloadSource<32>, RecordingDelegate, 8, 2, Peripheral>

    struct Rig {
        var sensor: Sensor
        var db: GATTDatabase<32, 256, 2>
        let server = ATTServer(maximumMTU: 247)
        /// Each link's bearer, by handle.
        var bearers: [UInt16: ATTStandardBearer] = [:]
        /// The stack's connection table this rig plays.
        var links = StackLinks()
        var control = StackControl()
        var handles: HeraldGATTHandles
        static let ours = simplePayload(0x90)

        init() throws {
            let payload = Self.ours
            let supplier = try FixedPayloadSource<32>(bytes: payload.span)
            var p = try Peripheral(source: NoPayloadSource(), advertising: HeraldAdvertisingConfiguration(),
                                   clock: HeraldClock(unixMillisAtZero: (KeyEpoch.standard.unixSeconds + 86_400) * 1_000))
            db = try GATTDatabase<32, 256, 2>(deviceName: Array("herald".utf8).span)
            try p.install(into: &db)
            guard let h = p.handles else { throw DecodeError.invalidValue(field: "handles", value: 0) }
            handles = h
            sensor = Sensor(supplier: supplier, delegate: RecordingDelegate(), peripheral: p)
        }

        mutating func send(_ pdu: [UInt8], link handle: UInt16, now: UInt64) -> [UInt8] {
            let link = links.link(handle)
            var out = ArraySink()
            var bearer = bearers[handle] ?? ATTStandardBearer()
            _ = server.handle(pdu: pdu.span, bearer: &bearer, link: link,
                              now: now, database: &db, delegate: &sensor, response: &out)
            bearers[handle] = bearer
            return out.bytes
        }

        mutating func connect(_ handle: UInt16, peer: DeviceAddress, now: UInt64) {
            links.insert(handle)
            sensor.stackDidConnect(ConnectionSummary(handle: handle, role: .peripheral, peer: peer,
                                                     timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 72)),
                                   now: now, control: &control)
        }
    }

    @Test func signalWritesBecomeEventsOfTheWritersTarget() throws {
        var rig = try Rig()
        rig.sensor.start(now: 0, control: &rig.control)
        rig.sensor.stackDidBecomeReady(ControllerInfo(), now: 0, control: &rig.control)
        // The stack holds the sensor's scan (active, 100 ms), to pause and resume it around
        // address changes and connection attempts.
        #expect(rig.control.scanning == ScanIntent(active: true, interval: 0x00A0, window: 0x0050))

        // A phone we hear advertising connects to us and writes immediate-send data.
        let phone = address(1)
        let data = AdvertData.heraldUUID16
        rig.sensor.stackDidReceive(advertisingReport: AdvertisingReport(kind: AdvertisingReportKind(rawValue: 0x13), address: phone,
                                                                        rssi: -50, txPower: nil, advertisingSID: nil, data: data.span),
                                   now: 100, control: &rig.control)
        rig.connect(0x0041, peer: phone, now: 200)
        let signal = rig.handles.signal.value
        let write: [UInt8] = [0x12, UInt8(signal & 0xFF), UInt8(signal >> 8), 0x04, 0x02, 0x00, 0xAB, 0xCD]
        // Write Response (Core 5.4 Vol 3 Part F 3.4.5.2).
        #expect(rig.send(write, link: 0x0041, now: 300) == [0x13])
        #expect(rig.sensor.delegate.events.last == .receive(1, [0xAB, 0xCD]))

        // Someone we never saw writes its payload in two fragments: a receive-only target.
        let writer = address(9)
        rig.connect(0x0042, peer: writer, now: 400)
        let message: [UInt8] = [0x01, 0x15, 0x00] + simplePayload(0x21)
        let first: [UInt8] = [0x12, UInt8(signal & 0xFF), UInt8(signal >> 8)] + message[0..<20]
        let second: [UInt8] = [0x12, UInt8(signal & 0xFF), UInt8(signal >> 8)] + message[20...]
        #expect(rig.send(first, link: 0x0042, now: 500) == [0x13])
        // The application hears the peripheral's own event too, after the sensor has filed the writer.
        rig.sensor.delegate.recordsPeripheral = true
        #expect(rig.send(second, link: 0x0042, now: 501) == [0x13])
        #expect(Array(rig.sensor.delegate.events.suffix(4)) == [.detect(2), .available(true, 2), .read(2, simplePayload(0x21)),
                                                                .peripheral("payload", 0x0042, simplePayload(0x21))])
        rig.sensor.delegate.recordsPeripheral = false
        let found = rig.sensor.central.database.index(of: writer)
        let i = try #require(found)
        #expect(rig.sensor.central.database[i]!.kind == .receiveOnly)
        // GATT server writes carry no time: the time of the latest stack callback (the connection) stamps it.
        #expect(rig.sensor.central.database[i]!.lastSeen == 400)

        // Our payload is served from the peripheral's source (Read Response, Part F 3.4.4.4).
        let payloadHandle = rig.handles.payload.value
        #expect(rig.send([0x0A, UInt8(payloadHandle & 0xFF), UInt8(payloadHandle >> 8)], link: 0x0041, now: 600) == [0x0B] + Rig.ours)

        // Attributes that are not the peripheral's are refused by the sensor.
        var sink = ArraySink()
        #expect(rig.sensor.read(id: 0x7777, link: 0x40, offset: 0, into: &sink) == .readNotPermitted)
        #expect(rig.sensor.write(id: 0x7777, link: 0x40, offset: 0, value: [1].span) == .writeNotPermitted)

        // Stopping the sensor leaves no scan to resume.
        rig.sensor.stop(control: &rig.control)
        #expect(rig.control.scanning == nil)
    }

    @Test func peripheralDeadlineIsPartOfTheApplicationDeadline() throws {
        var rig = try Rig()
        rig.sensor.stackDidBecomeReady(ControllerInfo(), now: 0, control: &rig.control)
        let d = try #require(rig.sensor.peripheral.deadline)
        #expect(rig.sensor.applicationDeadline == d)
        // The stack asks in place (`applicationDeadlineInPlace`, `deadlineInPlace`): the same answers.
        #expect(rig.sensor.peripheral.deadlineInPlace() == d)
        #expect(rig.sensor.applicationDeadlineInPlace() == d)
        // With the central on, its timers join in (the purge, the end of the first active scan);
        // both forms still agree.
        rig.sensor.start(now: 10, control: &rig.control)
        let both = try #require(rig.sensor.applicationDeadline)
        let central = HeraldSensorConfiguration.unspread
        #expect(both == min(d, 10 + central.purgeInterval, 10 + central.activeScanHold!))
        #expect(rig.sensor.applicationDeadlineInPlace() == both)
    }
}
