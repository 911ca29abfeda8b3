import BluetoothHost
import Foundation
import Herald
import Testing
@testable import HeraldRuntime

/// `--byte-order spec|apps`: the reference apps write country/state/location little-endian.
@Suite struct ByteOrderTests {
    /// iOS `VenueDiary`'s test reads `30 3a03 0400 40e20100` as country 826, state 4, location 123456.
    static let venueDiary: [UInt8] = [0x30, 0x3A, 0x03, 0x04, 0x00, 0x40, 0xE2, 0x01, 0x00]

    @Test func theReferenceAppsVenueIsDecodedWithAppsOrder() {
        let apps = DecodedPayloadFields.decode(Self.venueDiary, order: .littleEndian)
        #expect(apps == DecodedPayloadFields(type: "venue", protocolAndVersion: 0x30, country: 826, state: 4,
                                             locationCode: 123_456, byteOrder: "apps"))
        #expect(apps?.codes == "826/4/123456")
        // The specification's order reads the same bytes as country 14851: what a deployed iPhone made
        // of our beacon before the option existed.
        let spec = DecodedPayloadFields.decode(Self.venueDiary, order: .bigEndian)
        #expect(spec?.country == 14_851 && spec?.byteOrder == "spec")
        #expect(DecodedPayloadFields.decode([0x99, 1, 2], order: .bigEndian) == nil)
    }

    @Test func theBeaconWritesWhatTheAppsRead() throws {
        let header = PayloadHeader(protocolAndVersion: 0x30, countryCode: 826, stateCode: 4)
        let source = try FixedPayloadSource<64>.venueBeacon(header: header, locationCode: 123_456, order: .littleEndian)
        #expect((0..<source.payload.count).map { source.payload[$0] } == Self.venueDiary)
    }

    @Test func optionNames() {
        #expect(PayloadCodeByteOrder(optionName: "spec") == .bigEndian)
        #expect(PayloadCodeByteOrder(optionName: "apps") == .littleEndian)
        #expect(PayloadCodeByteOrder(optionName: "le") == nil)
        #expect(PayloadCodeByteOrder.littleEndian.optionName == "apps")
    }

    @Test func scanSummaryDecodesWithItsOrderAndSaysWhich() throws {
        var s = ScanSummary(start: 0)
        s.byteOrder = .littleEndian
        let data: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0xF6, 0xFC]
        let a = DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0xC0, 0x11, 0x22, 0x33, 0x44, 0x01))
        data.withUnsafeBufferPointer { b in
            let r = AdvertisingReport(kind: AdvertisingReportKind(rawValue: 0x13), address: a, rssi: -50, txPower: nil,
                                      advertisingSID: nil, data: Span(_unsafeElements: b))
            s.add(r, now: 10)
        }
        s.attach(.payload(Self.venueDiary), to: "C0:11:22:33:44:01")
        let d = try #require(s.devices.first)
        #expect(d.payloadFields?.codes == "826/4/123456")
        let table = s.table(durationSeconds: 1)
        #expect(table.contains("payload codes decoded with --byte-order apps"))
        #expect(table.contains("venue 826/4 location 123456"))
    }
}

/// herald-for-cpp's two samples as they serve their payloads (read from them on the simulated radio):
/// every rendering follows `--byte-order`, and the fixed test payload 0x08 is decoded.
@Suite struct ReferencePayloadRenderingTests {
    /// The C++ wearable: fixed test payload 0x08, 826/0, client 1234567890, little-endian.
    static let wearable: [UInt8] = [0x08, 0x3A, 0x03, 0x00, 0x00, 0xD2, 0x02, 0x96, 0x49, 0, 0, 0, 0]
    /// The C++ venue beacon: 826/4/123123 and premises name "Erin's Stakehouse".
    static let beacon: [UInt8] = [0x30, 0x3A, 0x03, 0x04, 0x00, 0xF3, 0xE0, 0x01, 0x00, 0x10, 0x11] + Array("Erin's Stakehouse".utf8)

    @Test func textFollowsTheByteOrder() {
        #expect(PayloadDescription.text(Self.beacon, order: .littleEndian) == "venue 826/4 location 123123 \"Erin's Stakehouse\"")
        // What `scan --byte-order apps` printed before: the text ignored the option.
        #expect(PayloadDescription.text(Self.beacon, order: .littleEndian) != "venue 14851/1024 location 4091543808 \"Erin's Stakehouse\"")
        #expect(PayloadDescription.text(Self.beacon, order: .bigEndian) == "venue 14851/1024 location 4091543808 \"Erin's Stakehouse\"")
        #expect(PayloadDescription.text(Self.wearable, order: .littleEndian) == "test 826/0 client 1234567890")
    }

    @Test func fixedTestPayloadIsAWearableWithFields() {
        #expect(DeviceKind(payload: Self.wearable) == .heraldWearable)
        #expect(DeviceKind.of(herald: true, apple: false, pseudoAddress: false, payload: Self.wearable) == .heraldWearable)
        let f = DecodedPayloadFields.decode(Self.wearable, order: .littleEndian)
        #expect(f == DecodedPayloadFields(type: "test", protocolAndVersion: 8, country: 826, state: 0,
                                          clientIdentifier: 1_234_567_890, byteOrder: "apps"))
        let v = DecodedPayloadFields.decode(Self.beacon, order: .littleEndian)
        #expect(v?.codes == "826/4/123123" && v?.premisesName == "Erin's Stakehouse")
    }

    func summary(order: PayloadCodeByteOrder) -> ScanSummary {
        var s = ScanSummary(start: 0)
        s.byteOrder = order
        let data: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0xF6, 0xFC]
        for (i, payload) in [Self.wearable, Self.beacon].enumerated() {
            let a = DeviceAddress(type: .randomDevice, address: BDAddress(displayOrder: 0xC0, 0x11, 0x22, 0x33, 0x44, UInt8(i + 1)))
            data.withUnsafeBufferPointer { b in
                let r = AdvertisingReport(kind: AdvertisingReportKind(rawValue: 0x13), address: a, rssi: -50, txPower: nil,
                                          advertisingSID: nil, data: Span(_unsafeElements: b))
                s.add(r, now: 10)
            }
            s.attach(.payload(payload), to: "C0:11:22:33:44:0\(i + 1)")
        }
        return s
    }

    @Test func tableLiveTableHTMLAndJSONFollowTheByteOrder() throws {
        let s = summary(order: .littleEndian)
        let table = s.table(durationSeconds: 1)
        #expect(table.contains("venue 826/4 location 123123 \"Erin's Stakehouse\""))
        #expect(table.contains("test 826/0 client 1234567890"))
        #expect(!table.contains("14851"))
        #expect(!table.contains("Herald (not read)"))
        let live = ScanLiveTable(colour: false).frame(s, elapsed: 1, title: "t")
        #expect(live.contains("venue 826/4 location 123123") && live.contains("test 826/0 client 1234567890") && !live.contains("14851"))
        let html = ScanReportHTML.render(s, title: "t", durationSeconds: 1)
        #expect(html.contains("venue 826/4 location 123123 &quot;Erin&#39;s Stakehouse&quot;"))
        #expect(html.contains("test 826/0 client 1234567890") && html.contains("--byte-order apps") && !html.contains("14851"))
        let json = String(decoding: try JSONEncoder().encode(s.devices), as: UTF8.self)
        #expect(json.contains("\"clientIdentifier\":1234567890") && json.contains("\"locationCode\":123123"))
        #expect(json.contains("venue 826\\/4 location 123123") && !json.contains("14851"))
    }

    @Test func wearableAndSenseEventsFollowTheByteOrder() throws {
        var lines: [String] = []
        let hub = WearableEventHub(json: true, consumer: nil, write: { lines.append($0) })
        hub.order = .littleEndian
        hub.read(Self.beacon, TargetIdentifier(1))
        hub.read(Self.wearable, TargetIdentifier(2))
        #expect(lines[0].contains("\"decoded\":\"venue 826\\/4 location 123123 \\\"Erin's Stakehouse\\\"\""))
        #expect(lines[0].contains("\"kind\":\"venue-beacon\""))
        #expect(lines[1].contains("\"decoded\":\"test 826\\/0 client 1234567890\"") && lines[1].contains("\"kind\":\"herald-wearable\""))
        #expect(hub.table().contains("test 826/0 client 1234567890") && hub.table().contains("venue 826/4 location 123123"))
        var printed: [String] = []
        var printer = SensorEventPrinter(json: true, write: { printed.append($0) })
        printer.order = .littleEndian
        Self.wearable.withUnsafeBufferPointer { b in printer.sensor(.ble, didRead: Span(_unsafeElements: b), fromTarget: TargetIdentifier(2)) }
        #expect(printed[0].contains("test 826\\/0 client 1234567890") && printed[0].contains("herald-wearable"))
    }
}
