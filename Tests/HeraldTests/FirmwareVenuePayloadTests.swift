import Foundation
import Testing
@testable import BluetoothHost
@testable import Herald

/// The firmware beacon serves its venue payload from flash (Firmware/Beacon/venue_payload.c), as a
/// provisioned device does: the venue is written into the image, not assembled and validated at each
/// boot. The venue is defined here and the payload made by the core's own builder
/// (`ExtendedDataWriter`, `FixedPayloadSource.venueBeacon`, which validates the extended data); this
/// suite fails when the checked-in bytes are not exactly that, in either code byte order (regenerate
/// with `HERALD_WRITE_GATT_TABLES=1 swift test --filter FirmwareVenuePayload`, the variable that
/// regenerates every generated firmware constant).
@Suite struct FirmwareVenuePayloadTests {
    /// The venue the beacon image describes.
    static let header = PayloadHeader(protocolAndVersion: 0x30, countryCode: 826, stateCode: 4)
    static let locationCode: UInt32 = 0x0001_E240
    static let name: StaticString = "Herald Cafe"

    /// What the image built at start-up before the bytes moved to flash: the same calls, the same
    /// capacities (the peripheral keeps at most 64 octets of payload per link).
    static func payload(order: PayloadCodeByteOrder) throws -> [UInt8] {
        var premises = FixedBytes<32>()
        try ExtendedDataWriter.append(code: ExtendedDataCode.premisesName, text: name, to: &premises)
        let source = try FixedPayloadSource<64>.venueBeacon(header: header, locationCode: locationCode,
                                                             extendedData: premises.span, order: order)
        return Array(span: source.payload.span)
    }

    @Test func checkedInPayloadIsWhatTheBuilderMakes() throws {
        let spec = try Self.payload(order: .bigEndian), apps = try Self.payload(order: .littleEndian)
        let text = Self.cSource(specification: spec, apps: apps)
        let url = FirmwareGATTTableTests.repository.appendingPathComponent("Firmware/Beacon/venue_payload.c")
        if ProcessInfo.processInfo.environment["HERALD_WRITE_GATT_TABLES"] == "1" {
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        let checkedIn = try String(contentsOf: url, encoding: .utf8)
        #expect(checkedIn == text, "Firmware/Beacon/venue_payload.c is not what the builder makes; regenerate it (see this suite)")
    }

    /// Each order's bytes parse back to the venue, with the premises name as extended data, and fit
    /// the 64 octets the beacon's peripheral keeps per link (a longer payload would be refused there
    /// with Unlikely Error on every read).
    @Test func bothOrdersDecodeToTheVenue() throws {
        for order in [PayloadCodeByteOrder.bigEndian, .littleEndian] {
            let bytes = try Self.payload(order: order)
            #expect(bytes.count <= 64)
            try bytes.withUnsafeBufferPointer { b throws in
                let parsed = try VenueBeaconPayload(parsing: b.span, order: order)
                #expect(parsed.header == Self.header)
                #expect(parsed.locationCode == Self.locationCode)
                #expect(Array(span: parsed.extendedData) == [ExtendedDataCode.premisesName, 11] + Array("Herald Cafe".utf8))
            }
        }
        #expect(try Self.payload(order: .bigEndian) != Self.payload(order: .littleEndian))
    }

    /// The C file the beacon compiles: both orders as `const` arrays (flash) and their accessors; the
    /// image calls the one its build selects, and `--gc-sections` drops the other.
    static func cSource(specification spec: [UInt8], apps: [UInt8]) -> String {
        func lines(_ b: [UInt8]) -> String {
            stride(from: 0, to: b.count, by: 12).map { i in
                "    " + b[i..<min(i + 12, b.count)].map { String(format: "0x%02x,", $0) }.joined(separator: " ")
            }.joined(separator: "\n")
        }
        return """
        // The venue beacon's payload (Herald beacon payload specification): protocol 0x30, country 826,
        // state 4, location code 0x0001E240, premises name "Herald Cafe" as extended data, in flash, as a
        // deployment provisions it. Generated with the core's builder by
        // Tests/HeraldTests/FirmwareVenuePayloadTests.swift, which defines the venue and fails when this
        // file differs; regenerate: HERALD_WRITE_GATT_TABLES=1 swift test --filter FirmwareVenuePayload
        #include <stdint.h>

        // Codes big-endian, the specification's order (the default build).
        static const uint8_t payload[\(spec.count)] = {
        \(lines(spec))
        };

        // Codes little-endian, the reference apps' order (FIRMWARE_SWIFTFLAGS=-DHERALD_APPS_BYTE_ORDER).
        static const uint8_t payload_apps[\(apps.count)] = {
        \(lines(apps))
        };

        const uint8_t *firmware_venue_payload(void) { return payload; }
        uint32_t firmware_venue_payload_size(void) { return sizeof payload; }
        const uint8_t *firmware_venue_payload_apps(void) { return payload_apps; }
        uint32_t firmware_venue_payload_apps_size(void) { return sizeof payload_apps; }

        """
    }
}
