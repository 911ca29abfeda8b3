import BluetoothHost
import Foundation
import Herald
@testable import HeraldRuntime
import Testing

/// Records what the hub hands to the logs.
final class RecordingConsumer: SensorEventConsumer {
    var events: [SensorEventRecord] = []
    func record(_ event: SensorEventRecord) { events.append(event) }
}

/// A clock the test moves by hand.
final class ManualClock {
    var now = Date(timeIntervalSince1970: 1_790_000_000)
    func advance(_ s: TimeInterval) { now = now.addingTimeInterval(s) }
}

@Suite("herald wearable: events, table, console")
struct WearableTests {
    static let payload: [UInt8] = [0x10, 0x03, 0x3A, 0x00, 0x00] + Array(repeating: 0xA1, count: 16)

    func rig(json: Bool = true) -> (WearableEventHub, RecordingConsumer, ManualClock, () -> [String]) {
        let consumer = RecordingConsumer()
        let clock = ManualClock()
        let box = LinesBox()
        let hub = WearableEventHub(json: json, consumer: consumer, clock: { clock.now }, write: { box.lines.append($0) })
        return (hub, consumer, clock, { box.lines })
    }

    final class LinesBox { var lines: [String] = [] }

    func objects(_ lines: [String]) throws -> [[String: Any]] {
        try lines.map { try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
    }

    @Test func delegateEventsBecomeJSONLinesAndLogRecords() throws {
        let (hub, consumer, _, lines) = rig()
        var d = WearableSensorDelegate(hub: hub)
        let t = TargetIdentifier(7)
        d.sensor(.ble, didDetect: t)
        d.sensor(.ble, didMeasure: Proximity(value: -61, calibration: 8), fromTarget: t)
        Self.payload.withUnsafeBufferPointer { d.sensor(.ble, didRead: Span(_unsafeElements: $0), fromTarget: t) }
        let data: [UInt8] = [0xCA, 0xFE]
        data.withUnsafeBufferPointer { d.sensor(.ble, didReceive: Span(_unsafeElements: $0), fromTarget: t) }
        Self.payload.withUnsafeBufferPointer {
            d.sensor(.ble, didMeasure: Proximity(value: -60), fromTarget: t, withPayload: Span(_unsafeElements: $0))
        }
        d.sensor(.ble, didUpdateState: .on)
        d.sensor(.ble, available: true, didDeleteOrDetect: t)  // a detect, already reported by didDetect
        d.sensor(.ble, available: false, didDeleteOrDetect: t)

        let o = try objects(lines())
        #expect(o.map { $0["event"] as? String } == ["didDetect", "didMeasure", "didRead", "didReceive",
                                                      "didMeasureWithPayload", "didUpdateState", "didDelete"])
        #expect(o[0]["target"] as? String == "T7")
        #expect(o[1]["rssi"] as? Int == -61 && o[1]["txPower"] as? Int == 8)
        #expect(o[2]["payload"] as? String == "10033a0000" + String(repeating: "a1", count: 16))
        #expect(o[2]["shortName"] as? String == payloadShortName(Self.payload))
        #expect(o[3]["data"] as? String == "cafe")
        #expect(o[5]["state"] as? String == "on" && o[5]["sensor"] as? String == "ble")
        #expect((o[0]["time"] as? String)?.hasSuffix("Z") == true)

        #expect(consumer.events.map(\.kind) == [.detect, .measure, .read, .receive, .delete])
        #expect(consumer.events[1].rssi == -61 && consumer.events[1].txPower == 8)
        #expect(consumer.events[2].payload == Self.payload && consumer.events[2].target == "T7")
        #expect(hub.payloadsRead == 1 && hub.readings == 1 && hub.devicesSeen == 1)
        #expect(hub.devices[7] == nil, "a deleted target leaves the table")
    }

    @Test func sharedPayloadsAreSplitAndLogged() throws {
        let (hub, consumer, _, lines) = rig()
        var d = WearableSensorDelegate(hub: hub)
        let a = Self.payload
        let b: [UInt8] = [0x10, 0, 0, 0, 0] + Array(repeating: 0xB2, count: 16)
        let list = a + b
        list.withUnsafeBufferPointer { raw in
            let shared = SharedPayloads(splitting: Span(_unsafeElements: raw), with: SimplePayloadLayout())
            d.sensor(.ble, didShare: shared, fromTarget: TargetIdentifier(2))
        }
        let o = try objects(lines())
        let expected = ["10033a0000" + String(repeating: "a1", count: 16), "1000000000" + String(repeating: "b2", count: 16)]
        #expect(o.first?["payloads"] as? [String] == expected)
        #expect(consumer.events.first?.sharedPayloads == [a, b])
    }

    @Test func withoutJSONNothingIsPrintedButLogsAreKept() {
        let (hub, consumer, _, lines) = rig(json: false)
        hub.detect(TargetIdentifier(1))
        #expect(lines().isEmpty)
        #expect(consumer.events.count == 1)
    }

    @Test func tableCountsReadingsInTheLast30Seconds() {
        let (hub, _, clock, _) = rig(json: false)
        let t = TargetIdentifier(3)
        hub.detect(t)
        for _ in 0..<4 { hub.measure(Proximity(value: -70), t); clock.advance(10) }  // at 0, 10, 20, 30 s
        hub.read(Self.payload, t)
        hub.setDevice(kind: .heraldWearable, address: "C0:11:22:33:44:03", for: 3)
        // Now 40 s: the readings at 10, 20, 30 s are within 30 s; the one at 0 s is not.
        let table = hub.table().split(separator: "\n").map(String.init)
        #expect(table.count == 2)
        #expect(table[0].hasPrefix("TARGET"))
        #expect(table[0].split(separator: " ").map(String.init) == ["TARGET", "ADDRESS", "KIND", "RSSI", "PAYLOAD", "LAST", "SEEN", "READINGS/30s"])
        let cols = table[1].split(separator: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        #expect(cols == ["T3", "C0:11:22:33:44:03", "Herald wearable", "-70", PayloadDescription.text(Self.payload, order: .bigEndian), "0s ago", "3"])
        #expect(hub.summary == "1 devices seen, 1 payloads read, 4 readings")
    }

    @Test func kindsFromTheSensorDatabaseInTheOneVocabulary() {
        let simple: [UInt8] = [0x10, 0, 0, 0, 0] + [UInt8](repeating: 7, count: 16)
        let venue: [UInt8] = [0x30, 0x03, 0x3A, 0, 0, 0, 0, 0x30, 0x39]
        // An nRF wearable serves the compliant signal characteristic, so the core guesses Android: the payload wins.
        #expect(DeviceKind.of(sensor: .herald, os: .android, hasHeraldService: true, pseudoAddress: false, payload: simple) == .heraldWearable)
        #expect(DeviceKind.of(sensor: .herald, os: .android, hasHeraldService: true, pseudoAddress: false, payload: venue) == .venueBeacon)
        #expect(DeviceKind.of(sensor: .herald, os: .android, hasHeraldService: true, pseudoAddress: false, payload: []) == .herald)
        #expect(DeviceKind.of(sensor: .herald, os: .unknown, hasHeraldService: nil, pseudoAddress: true, payload: simple) == .android)
        #expect(DeviceKind.of(sensor: .appleToCheck, os: .ios, hasHeraldService: true, pseudoAddress: false, payload: simple) == .ios)
        #expect(DeviceKind.of(sensor: .appleToCheck, os: .unknown, hasHeraldService: false, pseudoAddress: false, payload: []) == .appleOther)
    }

    @Test func tableListsMostRecentlySeenFirst() {
        let (hub, _, clock, _) = rig(json: false)
        hub.measure(Proximity(value: -50), TargetIdentifier(1))
        clock.advance(5)
        hub.measure(Proximity(value: -55), TargetIdentifier(2))
        let rows = hub.table().split(separator: "\n").dropFirst().map { String($0.prefix(3)) }
        #expect(rows == ["T2 ", "T1 "])
    }

    @Test func hexTextTakesHexDigitsOnly() {
        #expect(octets(hex: "") == [])
        #expect(octets(hex: "00fFa9") == [0x00, 0xFF, 0xA9])
        for bad in ["+f", "-1", "0x0f", "abc", "0g", " 0f", "0f "] { #expect(octets(hex: bad) == nil, "\(bad)") }
    }

    @Test func consoleSendCommands() throws {
        #expect(try WearableConsoleCommand.parse("send cafe") == .send(data: [0xCA, 0xFE], target: nil))
        #expect(try WearableConsoleCommand.parse("  SEND 00ff T12 ") == .send(data: [0x00, 0xFF], target: 12))
        #expect(try WearableConsoleCommand.parse("send 01 5") == .send(data: [0x01], target: 5))
        #expect(try WearableConsoleCommand.parse("   ") == nil)
        #expect(throws: WearableConsoleCommand.ParseError.unknownCommand("read")) { try WearableConsoleCommand.parse("read 01") }
        #expect(throws: WearableConsoleCommand.ParseError.usage) { try WearableConsoleCommand.parse("send") }
        #expect(throws: WearableConsoleCommand.ParseError.badHex) { try WearableConsoleCommand.parse("send abc") }
        #expect(throws: WearableConsoleCommand.ParseError.badHex) { try WearableConsoleCommand.parse("send zz") }
        // A sign is no hex digit (UInt8("+f", radix: 16) is 15).
        #expect(throws: WearableConsoleCommand.ParseError.badHex) { try WearableConsoleCommand.parse("send +f") }
        #expect(throws: WearableConsoleCommand.ParseError.badHex) { try WearableConsoleCommand.parse("send -1") }
        #expect(throws: WearableConsoleCommand.ParseError.badTarget("Tx")) { try WearableConsoleCommand.parse("send 01 Tx") }
        #expect(throws: WearableConsoleCommand.ParseError.badTarget("0")) { try WearableConsoleCommand.parse("send 01 0") }
        let long = String(repeating: "ab", count: HeraldSensorLimits.immediateSendCapacity + 1)
        #expect(throws: WearableConsoleCommand.ParseError.tooLong(HeraldSensorLimits.immediateSendCapacity + 1)) {
            try WearableConsoleCommand.parse("send \(long)")
        }
    }

    @Test func fixedSupplierServesItsBytesAndSplitsSimpleLists() throws {
        var s = try Self.payload.withUnsafeBufferPointer { try FixedPayloadSource<32>(bytes: Span(_unsafeElements: $0)) }
        var out = FixedBytes<128>()
        #expect(s.writePayload(at: 123, to: &out))
        #expect(WearableEventHub.bytes(out.span) == Self.payload)
        let list = Self.payload + Self.payload
        #expect(list.withUnsafeBufferPointer { s.firstPayloadLength(in: Span(_unsafeElements: $0)) } == 21)
    }
}

/// The sensor's peripheral half reports to the application's own delegate: `SensorDelegate` is a
/// `HeraldPeripheralDelegate`, so the wearable pairs its sensor delegate with the JSON printer and
/// both hear every event, with no wrapper around the peripheral.
@Suite("Peripheral events reach the sensor's delegate")
struct SensorPeripheralEventTests {
    struct Counting: SensorDelegate {
        var served: [[UInt8]] = []
        var connects = 0
        var disconnects: [HCIStatus] = []
        mutating func heraldPeripheral(didServePayload payload: Span<UInt8>, to link: HeraldLink) {
            served.append(WearableEventHub.bytes(payload))
        }
        mutating func heraldPeripheral(didConnect link: HeraldLink) { connects += 1 }
        mutating func heraldPeripheral(didDisconnect link: HeraldLink, reason: HCIStatus) { disconnects.append(reason) }
    }

    /// And the payload it serves is the sensor's supplier's: the peripheral has no source of its own.
    @Test func eachPeripheralEventReachesBothDelegatesOfAPair() throws {
        let payload: [UInt8] = [0x10, 0, 0, 0, 0] + (0..<16).map { UInt8($0) }
        let supplier = try payload.withUnsafeBufferPointer { try FixedPayloadSource<32>(bytes: Span(_unsafeElements: $0)) }
        var peripheral = try HeraldPeripheral<NoPayloadSource, StandardServerOffer, 2, 128, 256>(
            source: NoPayloadSource(), advertising: HeraldAdvertisingConfiguration(),
            clock: HeraldClock(unixMillisAtZero: (KeyEpoch.standard.unixSeconds + 86_400) * 1_000))
        var db = try GATTDatabase<24, 256, 2>(deviceName: Array("t".utf8).span)
        try peripheral.install(into: &db)
        let payloadID = peripheral.payloadID
        var app = HeraldSensor<FixedPayloadSource<32>, SensorDelegatePair<Counting, Counting>, 8, 2, HeraldPeripheral<NoPayloadSource, StandardServerOffer, 2, 128, 256>>(
            supplier: supplier, delegate: SensorDelegatePair(Counting(), Counting()), peripheral: peripheral)
        var control = StackControl()
        let peer = DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0xC0, 1, 2, 3, 4, 5))
        app.stackDidConnect(ConnectionSummary(handle: 0x40, role: .peripheral, peer: peer,
                                              timing: ConnectionTiming(interval: 24, latency: 0, supervisionTimeout: 72)),
                            now: 0, control: &control)
        var sink = ArraySink()
        #expect(app.read(id: payloadID, link: 0x40, offset: 0, into: &sink) == nil)
        #expect(sink.bytes == payload)
        app.stackDidDisconnect(handle: 0x40, reason: .remoteUserTerminated, now: 10, control: &control)
        for d in [app.delegate.first, app.delegate.second] {
            #expect(d.connects == 1)
            #expect(d.served == [payload])
            #expect(d.disconnects == [.remoteUserTerminated])
        }
        #expect(app.read(id: 0xFFFF, link: 0x40, offset: 0, into: &sink) == .readNotPermitted)
    }
}

/// A growable sink for these tests.
private struct ArraySink: ByteSink {
    var bytes: [UInt8] = []
    mutating func append(_ byte: UInt8) { bytes.append(byte) }
}
