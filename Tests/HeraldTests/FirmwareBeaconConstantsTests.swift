import Foundation
import Testing
@testable import BluetoothHost
@testable import Herald

/// The firmware beacon serves its venue payload (Firmware/Beacon/venue_payload.c) and advertises
/// (Firmware/Common/advertisement.c, the wearable's too) from flash, as a provisioned device does: the venue is written
/// into the image, not assembled and validated at each boot. The venue is defined here and the bytes
/// made by the core's own builders (`ExtendedDataWriter`, `FixedPayloadSource.venueBeacon`, which
/// validates the extended data; `HeraldAdvertisement`); this suite fails when the checked-in bytes
/// are not exactly that, the payload in either code byte order (regenerate with
/// `HERALD_WRITE_GATT_TABLES=1 swift test --filter FirmwareBeaconConstants`, the variable that
/// regenerates every generated firmware constant).
@Suite struct FirmwareBeaconConstantsTests {
    /// The venue the beacon image describes.
    static let header = PayloadHeader(protocolAndVersion: 0x30, countryCode: 826, stateCode: 4)
    static let locationCode: UInt32 = 0x0001_E240
    static let name: StaticString = "Herald Cafe"

    /// What the image built at start-up before the bytes moved to flash: the same calls, the same
    /// capacities (the peripheral kept at most 64 octets of payload per link).
    static func payload(order: PayloadCodeByteOrder) throws -> [UInt8] {
        var premises = FixedBytes<32>()
        try ExtendedDataWriter.append(code: ExtendedDataCode.premisesName, text: name, to: &premises)
        let source = try FixedPayloadSource<64>.venueBeacon(header: header, locationCode: locationCode,
                                                             extendedData: premises.span, order: order)
        return Array(span: source.payload.span)
    }

    @Test func checkedInPayloadIsWhatTheBuilderMakes() throws {
        let spec = try Self.payload(order: .bigEndian), apps = try Self.payload(order: .littleEndian)
        try Self.check(Self.cSource(specification: spec, apps: apps), file: "venue_payload.c")
    }

    /// What the beacon advertised when it built its advertisement at start-up: the advertiser's
    /// `HeraldAdvertisement(identifiers:txPower:)` for the image's configuration (the specification's
    /// identifiers, no Tx power, no name).
    @Test func checkedInAdvertisementIsWhatTheBuilderMakes() throws {
        let configuration = HeraldAdvertisingConfiguration(intervalMilliseconds: 100)
        let advertisement = try HeraldAdvertisement(identifiers: configuration.identifiers, txPower: configuration.txPower)
        let data = Array(span: advertisement.advertisingData.span), scan = Array(span: advertisement.scanResponseData.span)
        try Self.check(Self.cSource(advertisingData: data, scanResponse: scan), file: "advertisement.c", in: "Common")
        // And a scanner sees the Herald service in it.
        let seen = try HeraldAdvertClassification(advertisingData: advertisement.advertisingData.span,
                                                  scanResponse: advertisement.scanResponseData.span)
        #expect(seen.kind == .herald && seen.hasSpecificationServiceUUID && seen.hasRegisteredServiceUUID)
    }

    /// A peripheral given an advertisement made beforehand (what the image does with the bytes from
    /// flash: `HeraldPeripheral(source:advertiser:)`) queues the same commands at bring-up as one
    /// that makes it from the configuration.
    @Test func aPeripheralWithAnAdvertisementMadeBeforehandAdvertisesTheSame() throws {
        typealias Beacon = HeraldPeripheral<FixedPayloadSource<64>, StandardServerOffer, 2, 64, 32>
        let bytes = try Self.payload(order: .bigEndian)
        let source = try FixedPayloadSource<64>(bytes: bytes.span)
        let configuration = HeraldAdvertisingConfiguration(intervalMilliseconds: 100)
        let clock = HeraldClock(unixMillisAtZero: 0)
        let made = try HeraldAdvertisement(identifiers: configuration.identifiers, txPower: configuration.txPower)
        let copied = HeraldAdvertisement(advertisingData: FixedBytes(made.advertisingData.span),
                                         scanResponseData: FixedBytes(made.scanResponseData.span))
        var built = try Beacon(source: source, advertising: configuration, clock: clock)
        var given = Beacon(source: source, advertiser: HeraldAdvertiser(configuration: configuration, clock: clock,
                                                                        advertisement: copied))
        var builtControl = StackControl(), givenControl = StackControl()
        var builtEvents = IdentityBeaconEvents(), givenEvents = IdentityBeaconEvents()
        built.stackDidBecomeReady(ControllerInfo(), now: 0, control: &builtControl, delegate: &builtEvents)
        given.stackDidBecomeReady(ControllerInfo(), now: 0, control: &givenControl, delegate: &givenEvents)
        #expect(builtControl.commands.count == 4, "parameters, data, scan response, enable")
        #expect(givenControl.commands.count == builtControl.commands.count)
        for i in 0..<builtControl.commands.count {
            let a = builtControl.commands.packet(at: i).map { Array(span: $0.span) }
            let b = givenControl.commands.packet(at: i).map { Array(span: $0.span) }
            #expect(a != nil && a == b, "command \(i)")
        }
    }

    static func check(_ text: String, file: String, in folder: String = "Beacon") throws {
        let url = FirmwareGATTTableTests.repository.appendingPathComponent("Firmware/\(folder)/\(file)")
        if ProcessInfo.processInfo.environment["HERALD_WRITE_GATT_TABLES"] == "1" {
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        let checkedIn = try String(contentsOf: url, encoding: .utf8)
        #expect(checkedIn == text, "Firmware/\(folder)/\(file) is not what the builder makes; regenerate it (see this suite)")
    }

    static func lines(_ b: [UInt8]) -> String {
        stride(from: 0, to: b.count, by: 12).map { i in
            "    " + b[i..<min(i + 12, b.count)].map { String(format: "0x%02x,", $0) }.joined(separator: " ")
        }.joined(separator: "\n")
    }

    /// The advertisement as the beacon reads it: each block's length, then its octets.
    static func cSource(advertisingData data: [UInt8], scanResponse scan: [UInt8]) -> String {
        """
        // The firmware images' advertising data and scan response (Core 5.4 Vol 3 Part C 11), in flash:
        // flags, the Herald service UUIDs (Herald advertisement: the specification's 128-bit one here, the
        // registered 16-bit one in the scan response). Each block is its length, then its octets. Generated
        // with the core's HeraldAdvertisement by Tests/HeraldTests/FirmwareBeaconConstantsTests.swift,
        // which fails when this file differs; regenerate:
        // HERALD_WRITE_GATT_TABLES=1 swift test --filter FirmwareBeaconConstants
        #include <stdint.h>

        static const uint8_t advertisement[\(2 + data.count + scan.count)] = {
            \(data.count), // advertising data
        \(lines(data))
            \(scan.count), // scan response data
        \(lines(scan))
        };

        const uint8_t *firmware_advertisement(void) { return advertisement; }

        """
    }

    /// Each order's bytes parse back to the venue, with the premises name as extended data, and fit
    /// in 64 octets: one Read Response at the beacon's ATT_MTU of 68 (Firmware/Beacon/main.swift),
    /// so a phone reads the whole payload with one Read Request.
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
        """
        // The venue beacon's payload (Herald beacon payload specification): protocol 0x30, country 826,
        // state 4, location code 0x0001E240, premises name "Herald Cafe" as extended data, in flash, as a
        // deployment provisions it. Generated with the core's builder by
        // Tests/HeraldTests/FirmwareBeaconConstantsTests.swift, which defines the venue and fails when
        // this file differs; regenerate: HERALD_WRITE_GATT_TABLES=1 swift test --filter FirmwareBeaconConstants
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
