import Testing
@testable import BluetoothHost

private func array<let N: Int>(_ b: FixedBytes<N>) -> [UInt8] { (0..<b.count).map { b[$0] } }

/// (type, data) pairs of all structures, or the error that stopped parsing.
private func structures(_ bytes: [UInt8]) -> (items: [[UInt8]], error: DecodeError?) {
    var parser = AdvertisingDataParser(bytes.span)
    var items: [[UInt8]] = []
    do {
        while let s = try parser.next() {
            var item = [s.type]
            for i in s.data.indices { item.append(s.data[i]) }
            items.append(item)
        }
    } catch {
        return (items, error)
    }
    return (items, nil)
}

private func rawContains(_ uuid: BluetoothUUID, _ bytes: [UInt8]) -> Bool {
    AdvertisingDataParser.containsServiceUUID(uuid, in: bytes.span)
}

private let herald = BluetoothUUID("428132af-4746-42d3-801e-4572d65bfd9b")!
/// Captured Herald advertising data (herald-central-reads-phone): exactly 31 octets.
private let heraldAD = "020106 11079bfd5bd672451e80d3424647af328142 09fffaff47bc67741cca"

@Suite struct AdvertisingDataBuilderTests {
    @Test func buildsHeraldAdvertisementByteExact() throws {
        var b = AdvertisingDataBuilder<31>()
        try b.addFlags(ADFlags.generalDiscoverableLEOnly)
        try b.addServiceUUID(herald)
        try b.addManufacturerData(companyID: 0xFFFA, data: hex("47bc67741cca").span)
        #expect(array(b.build()) == hex(heraldAD))
        #expect(b.count == 31 && b.freeCapacity == 0)
        // Full: every further structure is refused and the data is unchanged.
        #expect(throws: AdvertisingDataError.doesNotFit) { try b.addTxPowerLevel(0) }
        #expect(throws: AdvertisingDataError.doesNotFit) { try b.add(type: 0xFF, data: hex("").span) }
        #expect(array(b.build()) == hex(heraldAD))
        let command = HCILESetAdvertisingData(data: b.build())
        #expect(command.data.count == 31)
    }

    @Test func thirtyOneOctetLimitIsExact() throws {
        var b = AdvertisingDataBuilder<31>()
        // 2 header octets + 29 data octets = 31: fits exactly.
        try b.addManufacturerData(companyID: 0x0059, data: [UInt8](repeating: 0xAB, count: 27).span)
        #expect(b.count == 31)
        var c = AdvertisingDataBuilder<31>()
        #expect(throws: AdvertisingDataError.doesNotFit) {
            try c.addManufacturerData(companyID: 0x0059, data: [UInt8](repeating: 0xAB, count: 28).span)
        }
        #expect(c.count == 0)
        try c.addFlags(0x06)
        #expect(throws: AdvertisingDataError.doesNotFit) { try c.addServiceUUIDs128([herald, herald].span) }
        #expect(c.count == 3)
    }

    @Test func everyStructureType() throws {
        var b = AdvertisingDataBuilder<64>()
        try b.addServiceUUIDs16([0x180F, 0xFEAA].span, complete: false)
        try b.addServiceUUIDs32([0x1234_5678].span)
        try b.addTxPowerLevel(-8)
        try b.addLocalName("Herald", complete: true)
        try b.addServiceData16(uuid: 0xFEAA, data: hex("0102").span)
        try b.addServiceData32(uuid: 0xAABB_CCDD, data: hex("03").span)
        try b.addLocalName(hex("4865").span, complete: false)
        #expect(
            array(b.build())
                == hex("05020f18aafe 050578563412 020af8 0709486572616c64 0516aafe0102 0620ddccbbaa03 03084865"))
        var big = AdvertisingDataBuilder<40>()
        try big.addServiceData128(uuid: BluetoothUUID(uuid16: 0x180F), data: hex("64").span)
        #expect(array(big.build()) == hex("1221 fb349b5f80000080001000000f180000 64"))
        try big.addServiceUUID(BluetoothUUID(uuid16: 0x180D), complete: false)
        #expect(array(big.build()).suffix(4) == hex("03020d18"))
    }

    @Test func nameIsShortenedToFit() throws {
        var b = AdvertisingDataBuilder<31>()
        try b.addFlags(0x06)
        let long = Array("Herald proximity sensor on nRF52840".utf8)
        try b.addLocalNameFitting(long.span)
        let out = array(b.build())
        #expect(out.count == 31)
        #expect(out[3] == 27 && out[4] == ADType.shortenedLocalName)
        #expect(Array(out[5...]) == Array(long.prefix(26)))
        // A name that fits goes in complete.
        var c = AdvertisingDataBuilder<31>()
        try c.addLocalNameFitting(Array("nRF".utf8).span)
        #expect(array(c.build()) == hex("04096e5246"))
        // A multi-octet character is never split: "é" is C3 A9.
        var d = AdvertisingDataBuilder<5>()
        try d.addLocalNameFitting(hex("41 42 c3a9 43").span)
        #expect(array(d.build()) == hex("030841 42"))
        var full = AdvertisingDataBuilder<2>()
        #expect(throws: AdvertisingDataError.doesNotFit) { try full.addLocalNameFitting(hex("41").span) }
    }

    @Test func oneStructureIsAtMost255Octets() throws {
        var b = AdvertisingDataBuilder<300>()
        try b.add(type: 0xFF, data: [UInt8](repeating: 1, count: 254).span)
        #expect(b.count == 256)
        var c = AdvertisingDataBuilder<300>()
        #expect(throws: AdvertisingDataError.doesNotFit) { try c.add(type: 0xFF, data: [UInt8](repeating: 1, count: 255).span) }
    }
}

@Suite struct AdvertisingDataParserTests {
    @Test func parsesCapturedAdvertisement() {
        let (items, error) = structures(hex(heraldAD))
        #expect(error == nil)
        #expect(items == [hex("0106"), hex("079bfd5bd672451e80d3424647af328142"), hex("fffaff47bc67741cca")])
    }

    @Test func zeroLengthEndsSignificantPart() {
        // HCI carries the full 31 octets; after the significant part comes zero padding.
        let padded = hex("020106 00 0509ffffffff") + [UInt8](repeating: 0, count: 10)
        let (items, error) = structures(padded)
        #expect(error == nil && items == [hex("0106")])
        let allZero = structures([UInt8](repeating: 0, count: 31))
        #expect(allZero.items.isEmpty && allZero.error == nil)
        let typeOnly = structures(hex("01ff"))
        #expect(typeOnly.items == [hex("ff")])
    }

    @Test func lengthPastEndIsAnError() {
        let (items, error) = structures(hex("020106 05ff0102"))
        #expect(items == [hex("0106")])
        #expect(error == .badLength(field: "AD structure length", declared: 5, limit: 3))
        var parser = AdvertisingDataParser(hex("05ff01").span)
        #expect(throws: DecodeError.self) { _ = try parser.next()?.type }
        let afterError = (try? parser.next()?.type) ?? nil
        #expect(afterError == nil)
    }

    @Test func roundTripThroughBuilder() throws {
        var b = AdvertisingDataBuilder<31>()
        try b.addFlags(0x05)
        try b.addServiceUUIDs16([0x1800, 0x1801, 0x180A].span)
        try b.addTxPowerLevel(4)
        try b.addLocalName("rt")
        let built = array(b.build())
        let (items, error) = structures(built)
        #expect(error == nil)
        #expect(items == [hex("0105"), hex("03 0018 0118 0a18"), hex("0a04"), hex("09 7274")])
    }

    @Test func rawUUIDSearch() {
        let data = hex("020106 0302aafe 11079bfd5bd672451e80d3424647af328142")
        #expect(rawContains(herald, data))
        #expect(rawContains(BluetoothUUID(uuid16: 0xFEAA), data))
        #expect(!rawContains(BluetoothUUID(uuid16: 0x180F), data))
        // Service data is not a service UUID list.
        #expect(!rawContains(BluetoothUUID(uuid16: 0x180F), hex("04160f1801")))
        // Malformed data answers "not found" rather than trapping.
        #expect(!rawContains(herald, hex("1107 9bfd")))
    }
}

@Suite struct AdvertisingDataSummaryTests {
    @Test func summarisesHeraldAdvertisement() throws {
        let s = try AdvertisingDataSummary(parsing: hex(heraldAD).span)
        #expect(s.flags == 0x06)
        #expect(s.uuid128Count == 1 && s.uuids128[0] == herald && s.uuid16Count == 0)
        #expect(s.uuidListsComplete)
        #expect(s.containsServiceUUID(herald))
        #expect(!s.containsServiceUUID(BluetoothUUID(uuid16: 0x180F)))
        #expect(s.manufacturerCompanyID == 0xFFFA && array(s.manufacturerData) == hex("47bc67741cca"))
        #expect(s.nameIsComplete == nil && s.name.isEmpty && s.txPowerLevel == nil && !s.truncated)
    }

    @Test func namesUUIDAliasesAndServiceData() throws {
        var b = AdvertisingDataBuilder<64>()
        try b.addServiceUUIDs16([0x180F].span, complete: false)
        try b.addServiceUUIDs32([0x0000_180D].span)
        try b.addLocalName("Herald")
        try b.addTxPowerLevel(-12)
        try b.addServiceData16(uuid: 0x180F, data: hex("64").span)
        try b.addServiceData128(uuid: herald, data: hex("0102").span)
        let s = try AdvertisingDataSummary(parsing: b.build().span)
        // An incomplete list anywhere means the advertiser did not list everything.
        #expect(!s.uuidListsComplete)
        #expect(s.uuid16Count == 1 && s.uuid32Count == 1)
        #expect(s.containsServiceUUID(BluetoothUUID(uuid16: 0x180F)))
        #expect(s.containsServiceUUID(BluetoothUUID("0000180f-0000-1000-8000-00805f9b34fb")!))
        #expect(s.containsServiceUUID(BluetoothUUID(uuid16: 0x180D)))  // 32-bit form of a 16-bit alias
        #expect(String(decoding: array(s.name), as: UTF8.self) == "Herald" && s.nameIsComplete == true)
        #expect(s.txPowerLevel == -12)
        #expect(s.serviceDataCount == 2)
        #expect(s.serviceData[0].uuid == BluetoothUUID(uuid16: 0x180F) && array(s.serviceData[0].data) == [0x64])
        #expect(s.serviceData[1].uuid == herald && array(s.serviceData[1].data) == [1, 2])
    }

    @Test func mergesScanResponse() throws {
        var s = try AdvertisingDataSummary(parsing: hex("020106").span)
        let response = hex("05084865726c")
        var parser = AdvertisingDataParser(response.span)
        while let structure = try parser.next() { try s.add(structure) }
        #expect(s.flags == 6 && s.nameIsComplete == false && array(s.name) == hex("4865726c"))
    }

    @Test func capacityOverflowSetsTruncated() throws {
        var b = AdvertisingDataBuilder<80>()
        let ten: [UInt16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
        try b.addServiceUUIDs16(ten.span)
        try b.addServiceUUIDs128([herald, herald, BluetoothUUID(uuid16: 0x1234)].span)
        let s = try AdvertisingDataSummary(parsing: b.build().span)
        #expect(s.truncated && s.uuid16Count == AdvertisingDataSummary.uuid16Capacity && s.uuid128Count == 2)
        #expect(s.containsServiceUUID(BluetoothUUID(uuid16: 8)) && !s.containsServiceUUID(BluetoothUUID(uuid16: 9)))
        // The raw search has no capacity limit.
        let raw = array(b.build())
        #expect(rawContains(BluetoothUUID(uuid16: 9), raw))
    }

    @Test func malformedStructuresAreTypedErrors() {
        #expect(throws: DecodeError.badLength(field: "Service UUID list", declared: 3, limit: 2)) {
            _ = try AdvertisingDataSummary(parsing: hex("0403 0f1801").span)
        }
        #expect(throws: DecodeError.badLength(field: "Tx Power Level", declared: 2, limit: 1)) {
            _ = try AdvertisingDataSummary(parsing: hex("030a 0000").span)
        }
        #expect(throws: DecodeError.badLength(field: "Manufacturer Specific Data", declared: 1, limit: 2)) {
            _ = try AdvertisingDataSummary(parsing: hex("02ff 59").span)
        }
        #expect(throws: DecodeError.badLength(field: "Service Data", declared: 3, limit: 4)) {
            _ = try AdvertisingDataSummary(parsing: hex("0420 010203").span)
        }
        #expect(throws: DecodeError.badLength(field: "Flags", declared: 0, limit: 1)) {
            _ = try AdvertisingDataSummary(parsing: hex("0101").span)
        }
        #expect(throws: DecodeError.badLength(field: "AD structure length", declared: 9, limit: 2)) {
            _ = try AdvertisingDataSummary(parsing: hex("0909 41").span)
        }
    }
}
