import Testing
@testable import BluetoothHost
@testable import Herald

/// The sensor as the stack's application: adverts in, LE Create Connection out, then the GATT client
/// on the link with ATT PDUs checked byte for byte, and the disconnection at the end.
@Suite("Sensor on the stack: GATT client driven by the central procedure")
struct SensorStackTests {
    typealias Array2 = HeraldSensor<SimplePayloadLayout, SensorDelegatePair<RecordingDelegate, RecordingDelegate>, 8, 2, NoSensorPeripheral>

    /// ATT PDUs queued on `handle`, oldest first (drained through a credit pool, as the stack would).
    static func takeATT(_ control: inout StackControl, handle: UInt16) -> [[UInt8]] {
        _ = control.credits.open(handle: handle)
        var sink = ArraySink()
        control.acl.drain(credits: &control.credits, into: &sink)
        let out = attPDUs(inH4: sink.bytes)
        _ = control.credits.completed(handle: handle, count: UInt16(out.count))
        return out
    }

    /// The ATT PDUs of drained H4 ACL packets, each one whole PDU in one packet: H4 0x02, handle (2),
    /// ACL length (2), L2CAP length (2), channel 0x0004 (2), PDU.
    static func attPDUs(inH4 bytes: [UInt8]) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var b = bytes[...]
        while b.count >= 9 {
            let start = b.startIndex
            let aclLength = Int(b[start + 3]) | Int(b[start + 4]) << 8
            out.append(Array(b[(start + 9)..<(start + 5 + aclLength)]))
            b = b[(start + 5 + aclLength)...]
        }
        return out
    }

    static func commands(_ control: StackControl) -> [HCIOpcode] {
        (0..<control.commands.count).compactMap { control.commands.opcode(at: $0) }
    }

    /// Half of each 100 ms scan interval, not all of it: a continuous scan on Zephyr's link layer
    /// reserves the whole interval, and a wearable beside it sent only every other advert
    /// (`HeraldCentral.scanEventWindow`).
    @Test func theScanLeavesHalfOfEachIntervalToTheControllersOtherEvents() throws {
        var app = Array2(supplier: SimplePayloadLayout(), delegate: SensorDelegatePair(RecordingDelegate(), RecordingDelegate()), configuration: .unspread)
        var control = StackControl()
        app.start(now: 0, control: &control)
        app.stackDidBecomeReady(ControllerInfo(), now: 10, control: &control)
        #expect(control.commands.opcode(at: 0) == HCILESetScanParameters.opcode)
        let packet = try #require(control.commands.packet(at: 0))
        // H4 indicator, opcode (2), length, then LE_Scan_Type, LE_Scan_Interval, LE_Scan_Window
        // (Core 5.4 Vol 4 Part E 7.8.10).
        let octets = (0..<packet.count).map { packet[$0] }
        #expect(Array(octets[5..<9]) == [0xA0, 0x00, 0x50, 0x00])
    }

    @Test func discoveryReadAndDisconnectOverATT() {
        var app = Array2(supplier: SimplePayloadLayout(), delegate: SensorDelegatePair(RecordingDelegate(), RecordingDelegate()), configuration: .unspread)
        var control = StackControl()
        control.credits.configure(leDataLength: 251, leTotalPackets: 8)
        app.start(now: 0, control: &control)
        // Not started until the controller is ready.
        #expect(!app.central.isOn)
        app.stackDidBecomeReady(ControllerInfo(), now: 10, control: &control)
        #expect(app.central.isOn)
        #expect(Self.commands(control) == [HCILESetScanParameters.opcode, HCILESetScanEnable.opcode])
        #expect(app.delegate.first.events == [.state(.array, .on), .state(.ble, .on)])
        control.commands.removeAll()

        let peer = address(0x31)
        let data = AdvertData.heraldUUID16
        let report = AdvertisingReport(kind: AdvertisingReportKind(rawValue: 0x13), address: peer, rssi: -58, txPower: nil,
                                       advertisingSID: nil, data: data.span)
        app.stackDidReceive(advertisingReport: report, now: 100, control: &control)
        #expect(control.connecting?.peer == peer)
        #expect(control.connecting?.deadline == 8_100)
        // The scanner pauses for the attempt: a controller may refuse to initiate while it scans
        // (Zephyr answers 0x0C).
        #expect(Self.commands(control) == [HCILESetScanEnable.opcode, HCILECreateConnection.opcode])
        control.commands.removeAll()
        control.connecting = nil

        let h: UInt16 = 0x0040
        let link = ConnectionSummary(handle: h, role: .central, peer: peer,
                                     timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 72))
        app.stackDidConnect(link, now: 200, control: &control)
        // Exchange MTU Request, Client Rx MTU 247 (Core 5.4 Vol 3 Part F 3.4.2.1).
        #expect(Self.takeATT(&control, handle: h) == [[0x02, 0xF7, 0x00]])

        func answer(_ pdu: [UInt8], at t: UInt64 = 300) -> [[UInt8]] {
            app.stackDidReceiveATT(handle: h, pdu: pdu.span, now: t, control: &control)
            return Self.takeATT(&control, handle: h)
        }
        let payloadUUID: [UInt8] = [0xe7, 0x33, 0x89, 0x8f, 0xe3, 0x43, 0x21, 0xa1, 0x29, 0x48, 0x05, 0x8f, 0xf8, 0xc0, 0x98, 0x3e]
        let androidUUID: [UInt8] = [0x11, 0x1a, 0x82, 0x80, 0x9a, 0xe0, 0x24, 0x83, 0x7a, 0x43, 0x2e, 0x09, 0x13, 0xb8, 0x17, 0xf6]
        // MTU stays 23; Read By Type of the payload characteristic's UUID over every handle (Read Using
        // Characteristic UUID, Core 5.4 Vol 3 Part G 4.8.2; Part F 3.4.4.1), before any discovery.
        #expect(answer([0x03, 0x17, 0x00]) == [[0x08, 0x01, 0x00, 0xFF, 0xFF] + payloadUUID])
        // A Simple payload with 4 octets of extended data: 25 octets, more than one response holds.
        let payload = simplePayload(0x61) + [0x40, 0x02, 0xAA, 0xBB]
        // Handle 0x0008 and 19 octets (ATT_MTU-4) fill the response: Read Blob from 19 (Part F 3.4.4.5).
        #expect(answer([0x09, 0x15, 0x08, 0x00] + payload[0..<19]) == [[0x0C, 0x08, 0x00, 0x13, 0x00]])
        // The rest: the payload is read and delivered. Then the walk, for the signal characteristic (the
        // peer's platform decides whether it gets payload sharing): Read By Group Type (Part F 3.4.4.9).
        #expect(answer([0x0D] + payload[19...]) == [[0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28]])
        for events in [app.delegate.first.events, app.delegate.second.events] { #expect(events.contains(.read(1, payload))) }
        // GAP 0x0001-0x0005 and Herald (0xFCF6) 0x0006-0x000C: the Herald service found, the walk asks
        // for no more services (Part G 4.4.1 lets it end early) and goes to its characteristics.
        #expect(answer([0x11, 0x06, 0x01, 0x00, 0x05, 0x00, 0x00, 0x18, 0x06, 0x00, 0x0C, 0x00, 0xF6, 0xFC])
                == [[0x08, 0x06, 0x00, 0x0C, 0x00, 0x03, 0x28]])
        // Payload characteristic (read) at 0x0008, 128-bit UUID: one declaration per response at MTU 23.
        #expect(answer([0x09, 0x15, 0x07, 0x00, 0x02, 0x08, 0x00] + payloadUUID) == [[0x08, 0x08, 0x00, 0x0C, 0x00, 0x03, 0x28]])
        #expect(answer([0x09, 0x15, 0x09, 0x00, 0x08, 0x0A, 0x00] + androidUUID) == [[0x08, 0x0A, 0x00, 0x0C, 0x00, 0x03, 0x28]])
        #expect(Self.commands(control).isEmpty)
        // Attribute Not Found ends the walk: an Android peer gets no sharing, so the work is done and
        // the link is closed at once, with Remote User Terminated Connection (0x13). The scan, paused
        // since the link came up (no command above turned it back on), starts again with the read done.
        #expect(answer([0x01, 0x08, 0x0A, 0x00, 0x0A]) == [])
        #expect(Self.commands(control) == [HCIDisconnect.opcode, HCILESetScanParameters.opcode, HCILESetScanEnable.opcode])
        // HCI Disconnect (opcode 0x0406): handle 0x0040, reason 0x13 (Core 5.4 Vol 4 Part E 7.1.6).
        #expect(array(control.commands.packet(at: 0)!) == [0x01, 0x06, 0x04, 0x03, 0x40, 0x00, 0x13])
        for events in [app.delegate.first.events, app.delegate.second.events] {
            #expect(events.contains(.read(1, payload)))
            #expect(events.last == .measureWithPayload(1, -58, payload))
        }
        app.stackDidDisconnect(handle: h, reason: .remoteUserTerminated, now: 400, control: &control)
        #expect(app.central.slots[0] == nil)  // the link and its GATT client are gone
        #expect(app.central.openLinks == 0)
        #expect(app.central.database[0]!.lastSeen == 100)
    }

    @Test func transactionTimeoutDisconnectsAndCountsAFailure() {
        var always = HeraldSensorConfiguration.unspread
        always.activeScanHold = nil  // no scan-type deadline among the ones this test reads
        var sensor = HeraldSensor<SimplePayloadLayout, RecordingDelegate, 8, 2, NoSensorPeripheral>(supplier: SimplePayloadLayout(), delegate: RecordingDelegate(),
                                                                                                  configuration: always)
        var control = StackControl()
        control.credits.configure(leDataLength: 251, leTotalPackets: 8)
        sensor.stackDidBecomeReady(ControllerInfo(), now: 0, control: &control)
        sensor.start(now: 0, control: &control)
        let data = AdvertData.heraldUUID16
        let report = AdvertisingReport(kind: AdvertisingReportKind(rawValue: 0x13), address: address(1), rssi: -58, txPower: nil,
                                       advertisingSID: nil, data: data.span)
        sensor.stackDidReceive(advertisingReport: report, now: 0, control: &control)
        control.commands.removeAll()
        sensor.stackDidConnect(ConnectionSummary(handle: 5, role: .central, peer: address(1),
                                                 timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 72)),
                               now: 1_000, control: &control)
        // The read pauses the scan for 1 s at most (`scanPauseLimit`), and the peer owes a first
        // answer within 5 s (`firstAnswerTimeout`).
        #expect(sensor.applicationDeadline == 1_000 + 1_000)
        sensor.stackTimerFired(now: 2_000, control: &control)
        #expect(sensor.applicationDeadline == 1_000 + 5_000)
        control.commands.removeAll()  // the scan back on
        // It answers the Exchange MTU at once.
        sensor.stackDidReceiveATT(handle: 5, pdu: [0x03, 0x17, 0x00].span, now: 2_100, control: &control)
        // Then never again: the next request's ATT transaction timeout (Core 5.4 Vol 3 Part F 3.3.3).
        #expect(sensor.applicationDeadline == 2_100 + 30_000)
        sensor.stackTimerFired(now: 32_100, control: &control)
        #expect(Self.commands(control) == [HCIDisconnect.opcode])
        #expect(sensor.central.database[0]!.consecutiveFailures == 1)
    }

    @Test func controllerFailureReportsUnavailableAndRestartsWhenReady() {
        var sensor = HeraldSensor<SimplePayloadLayout, RecordingDelegate, 8, 2, NoSensorPeripheral>(supplier: SimplePayloadLayout(), delegate: RecordingDelegate())
        var control = StackControl()
        sensor.start(now: 0, control: &control)
        sensor.stackDidBecomeReady(ControllerInfo(), now: 0, control: &control)
        sensor.stackControllerDidFail(.noResponse(resets: 1), now: 5, control: &control)
        sensor.stackDidBecomeReady(ControllerInfo(), now: 9, control: &control)
        // The application's request (`.array`) once; the BLE sensor's own state as the controller goes and comes.
        #expect(sensor.delegate.events == [.state(.array, .on), .state(.ble, .on), .state(.ble, .unavailable), .state(.ble, .on)])
        sensor.stop(control: &control)
        #expect(sensor.delegate.events.suffix(2) == [.state(.array, .off), .state(.ble, .off)])
    }
}
