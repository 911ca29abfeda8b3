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

/// The reference apps' Apple device filter, with the adverts of herald-for-android's
/// `BLEDeviceFilterTest` (captured from real devices) and its default patterns.
@Suite("Apple device filter (reference deviceFilterFeaturePatterns)")
struct AppleDeviceFilterTests {
    func appleData(_ advert: [UInt8]) -> [UInt8] {
        // The Apple manufacturer data of the first 0x004C AD structure.
        var i = 0
        while i + 1 < advert.count {
            let length = Int(advert[i])
            if length >= 3, advert[i + 1] == 0xFF, advert[i + 2] == 0x4C, advert[i + 3] == 0x00 {
                return Array(advert[(i + 4)..<min(advert.count, i + 1 + length)])
            }
            i += 1 + length
        }
        return []
    }

    func firstMatch(_ data: [UInt8]) -> Int? { AppleDeviceFilter.firstMatch(inAppleData: data.span) }
    func matches(_ pattern: StaticString, _ data: [UInt8]) -> Bool { AppleDeviceFilter.matches(pattern, data.span) }

    func kind(_ advert: String) throws -> HeraldAdvertKind {
        let data = hex(advert)
        return try HeraldAdvertClassification(advertisingData: data.span).kind
    }

    @Test func phonesAndMacsAreCheckedAppleTVIsIgnored() throws {
        // iPhone X, iOS 12 background, iPhone SE background, iPhone 7, MacBook Pro: connect to check.
        #expect(try kind("02011A020A0C0BFF4C001006071EA3DD89E014FF4C000100000000000000000000200000000000") == .appleConnectToCheck)
        #expect(try kind("02011A14FF4C000100000000000000000000200000000000") == .appleConnectToCheck)
        #expect(try kind("02011a020a0c14ff4c000100000000000000000000200000000000") == .appleConnectToCheck)
        #expect(try kind("0bff4c001006061a396363ce") == .appleConnectToCheck)
        #expect(try kind("0201060AFF4C001005421C1E616A") == .appleConnectToCheck)
        #expect(try kind("02011a0aff4c001005031c0b4cac") == .appleConnectToCheck)
        // Apple TV: Nearby Info with action 0x14.
        #expect(try kind("02011a020a0c0aff4c00100508141bba69") == .appleIgnored)
        // Coincidence: the bytes FF4C00 inside a message are data, not a second segment.
        #expect(try kind("02011a020a0c0aff4c0010050814ff4c00") == .appleIgnored)
        // Two messages in one segment, the first ignorable.
        #expect(try kind("02011a0dff4c0010050814123456100101") == .appleIgnored)
        // nRF Connect on an iPhone advertises Handoff (0x0C), which the reference patterns ignore.
        #expect(try kind("1bff4c000c0e00c857ac085510515d52cf3862211006551eee51497a") == .appleIgnored)
        // iPhone X with a 0x12 (Find My) message: not in the list.
        #expect(try kind("1eff4c001219006d17255505df2aec6ef580be0ddeba8bb034c996de5b0200") == .appleConnectToCheck)
        // A Herald advert wins over any Apple message.
        #expect(try kind("0303f6fc 0aff4c00100508141bba69") == .herald)
    }

    @Test func messagesAreSplitAsTheReferenceParserDoes() {
        // Each pattern index the reference tests expect to match (nil: none of the defaults).
        let cases: [(String, Int?)] = [
            ("02011a020a0c0aff4c00100508141bba69", 1),             // 10....14
            ("02011a0dff4c0010050814123456100101", 1),
            ("1bff4c000c0e00c857ac085510515d52cf3862211006551eee51497a", 11),  // 0C
            ("02011A14FF4C000100000000000000000000200000000000", nil),
            ("0bff4c001006061a396363ce", nil),
        ]
        for (advert, expected) in cases {
            let data = appleData(hex(advert))
            #expect(firstMatch(data) == expected, "\(advert)")
        }
        // An overflow area with no bits set: no app advertises a service.
        #expect(firstMatch(([0x01] + [UInt8](repeating: 0, count: 16))) == 2)
        // AirPods (proximity pairing 0x07), AirDrop (0x05), a length past the end cut to what is there.
        #expect(firstMatch([0x07, 0x19, 0x01, 0x0E, 0x20]) == 4)
        #expect(firstMatch([0x10, 0x05]) == nil)
        #expect(firstMatch([0x10]) == nil)
        #expect(firstMatch([UInt8]()) == nil)
    }

    @Test func patternsMatchHexTextCaseInsensitivelyFromTheStart() {
        #expect(matches("10....04", [0x10, 0x06, 0x0C, 0x04, 0x4F]))
        #expect(matches("10....1a", [0x10, 0x06, 0x06, 0x1A]))
        #expect(!matches("10....04", [0x10, 0x06, 0x0C, 0x05]))
        #expect(!matches("10....04", [0x01, 0x00, 0x60, 0xC0, 0x54]))
        #expect(!matches("10....04", [0x10, 0x06]))
    }
}
