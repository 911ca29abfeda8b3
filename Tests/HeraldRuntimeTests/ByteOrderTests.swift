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
        #expect(table.contains("826/4/123456"))
    }
}
