import Testing
import BluetoothHost
@testable import Herald

@Suite struct AdvertTests {
    /// Herald "Android" phone as the central in shared/captures/herald-writer-signal-messages.btsnoop
    /// saw it (Extended Advertising Report data): flags, the 128-bit service UUID, and a pseudo device
    /// address under manufacturer ID 0xFFFA.
    static let heraldAndroid = hex("020106 11079bfd5bd672451e80d3424647af328142 09fffaff365cf1ddea9c")
    /// A backgrounded iPhone: flags 0x1a and Apple's overflow area (type 0x01, 16-byte service bitmap),
    /// as sniffed in D. Young, "The Secrets of iOS Bluetooth Advertising in the Background" (2020).
    static let iPhoneBackground = hex("02011a 14ff4c0001 000000000000000000000000000000 80")
    /// An iBeacon (Apple type 0x02, length 0x15; proximity UUID, major, minor, measured power), from a
    /// published LE Set Advertising Data example.
    static let iBeacon = hex("02011a 1aff4c000215 e2c56db5dffb48d2b060d0f5a71096e0 0000 0000 c5")

    func classify(_ adv: [UInt8], _ scan: [UInt8] = []) throws(DecodeError) -> HeraldAdvertClassification {
        try adv.withUnsafeBufferPointer { a throws(DecodeError) in
            try scan.withUnsafeBufferPointer { s throws(DecodeError) in
                try HeraldAdvertClassification(advertisingData: Span(_unsafeElements: a), scanResponse: Span(_unsafeElements: s))
            }
        }
    }

    @Test func heraldAndroidAdvertWithPseudoAddress() throws {
        let c = try classify(Self.heraldAndroid)
        #expect(c.kind == .herald)
        #expect(c.hasSpecificationServiceUUID && !c.hasRegisteredServiceUUID)
        #expect(c.pseudoDeviceAddress.map { bytes($0.data) } == hex("365cf1ddea9c"))
        #expect(!c.isApple && c.txPower == nil)
    }

    @Test func iPhoneInTheBackgroundNeedsAConnection() throws {
        let c = try classify(Self.iPhoneBackground)
        #expect(c.kind == .appleConnectToCheck)
        #expect(c.isApple && c.appleType == 0x01 && c.pseudoDeviceAddress == nil)
    }

    @Test func iBeaconIsNotHerald() throws {
        let c = try classify(Self.iBeacon)
        #expect(c.kind == .notHerald)
        #expect(c.isApple && c.appleType == 0x02)
    }

    @Test func registeredIdentifiersAndTxPowerAnywhere() throws {
        // 16-bit 0xFCF6 in an incomplete list beside another UUID, registered manufacturer ID, Tx power.
        let adv = hex("020106 050218 0ff6fc 09fff105 010203040506 020af8")
        let c = try classify(adv)
        #expect(c.kind == .herald && c.hasRegisteredServiceUUID && c.txPower == -8)
        #expect(c.pseudoDeviceAddress.map { bytes($0.data) } == hex("010203040506"))
        // Herald only in the scan response.
        let d = try classify(hex("020106"), hex("0303f6fc"))
        #expect(d.kind == .herald)
        // A 0xFFFA payload of another length is not a pseudo address.
        #expect(try classify(hex("05fffaff0102")).kind == .notHerald)
    }

    @Test func malformedAdvertsThrow() {
        #expect(throws: DecodeError.badLength(field: "AD structure length", declared: 17, limit: 6)) { try classify(hex("020106 1107 9bfd5bd672")) }
        #expect(throws: DecodeError.badLength(field: "Service UUID list", declared: 3, limit: 2)) { try classify(hex("0403f6fc01")) }
        #expect(throws: DecodeError.badLength(field: "Tx Power Level", declared: 2, limit: 1)) { try classify(hex("030a0102")) }
        #expect(throws: DecodeError.badLength(field: "Manufacturer Specific Data", declared: 1, limit: 2)) { try classify(hex("02ff4c")) }
    }

    @Test func defaultAdvertisementUsesSpecificationIdentifiers() throws {
        let name = Array("Herald nRF52840 sensor".utf8)
        let ad = try name.withUnsafeBufferPointer { n throws(AdvertisingDataError) in
            try HeraldAdvertisement(name: Span(_unsafeElements: n))
        }
        let adv = (0..<ad.advertisingData.count).map { ad.advertisingData[$0] }
        let scan = (0..<ad.scanResponseData.count).map { ad.scanResponseData[$0] }
        #expect(adv == hex("020106 11079bfd5bd672451e80d3424647af328142"))
        #expect(scan == hex("0303f6fc 1709") + name)
        #expect(scan.count <= 31)
        let c = try classify(adv, scan)
        #expect(c.hasSpecificationServiceUUID && c.hasRegisteredServiceUUID && c.kind == .herald)
    }

    @Test func registeredOptionAndShortenedName() throws {
        let name = Array("A very long device name that does not fit".utf8)
        let ad = try name.withUnsafeBufferPointer { n throws(AdvertisingDataError) in
            try HeraldAdvertisement(identifiers: .registered, name: Span(_unsafeElements: n), txPower: 0)
        }
        let adv = (0..<ad.advertisingData.count).map { ad.advertisingData[$0] }
        let scan = (0..<ad.scanResponseData.count).map { ad.scanResponseData[$0] }
        #expect(adv == hex("020106 0303f6fc 020a00"))
        // 18 octets of UUID leave 13: length, type 0x08 (Shortened Local Name) and 11 name octets.
        #expect(scan == hex("11079bfd5bd672451e80d3424647af328142 0c08") + Array(name[0..<11]))
        #expect(scan.count == 31)
    }
}
