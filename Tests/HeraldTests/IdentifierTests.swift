import Testing
import BluetoothHost
@testable import Herald

@Suite struct IdentifierTests {
    @Test func uuidConstantsMatchTheirTextForm() throws {
        #expect(HeraldIdentifiers.serviceUUID == (try #require(BluetoothUUID("428132af-4746-42d3-801e-4572d65bfd9b"))))
        #expect(HeraldIdentifiers.payloadCharacteristicUUID == (try #require(BluetoothUUID("3e98c0f8-8f05-4829-a121-43e38f8933e7"))))
        #expect(HeraldIdentifiers.androidSignalCharacteristicUUID == (try #require(BluetoothUUID("f617b813-092e-437a-8324-e09a80821a11"))))
        #expect(HeraldIdentifiers.iosSignalCharacteristicUUID == (try #require(BluetoothUUID("0eb0d5f2-eae4-4a9a-8af3-a4adb02d4363"))))
        #expect(HeraldIdentifiers.registeredServiceUUID.uuid16 == 0xFCF6)
        #expect(HeraldIdentifiers.registeredServiceUUID.wireSize == 2)
        #expect(HeraldIdentifiers.isHeraldService(BluetoothUUID(uuid16: 0xFCF6)))
        #expect(!HeraldIdentifiers.isHeraldService(BluetoothUUID(uuid16: 0x180F)))
        #expect(HeraldIdentifiers.pseudoDeviceAddressManufacturerID == 0xFFFA)
        #expect(HeraldIdentifiers.registeredManufacturerID == 0x05F1)
        #expect(HeraldIdentifiers.appleCompanyID == 0x004C)
    }

    @Test func capturedAdvertCarriesTheServiceUUIDInWireOrder() {
        // The 128-bit UUID as the phone in shared/captures advertises it (AD type 0x07).
        var s = ArraySink()
        HeraldIdentifiers.serviceUUID.write(to: &s)
        #expect(s.bytes == hex("9bfd5bd672451e80d3424647af328142"))
    }

    @Test func everyPseudoDeviceAddressVector() throws {
        let rows = try vectorRows("pseudoDeviceAddress.csv")
        #expect(rows.count == 44)
        for row in rows {
            let value = try #require(Int64(row[0]))
            let expected = base64(row[1])
            let a = PseudoDeviceAddress(value: value)
            #expect(bytes(a.data) == expected, "value \(value)")
            // Decoding keeps everything but the two bytes that never travel.
            let decoded = try expected.withUnsafeBufferPointer { b throws(DecodeError) in try PseudoDeviceAddress(wire: Span(_unsafeElements: b)) }
            #expect(decoded == a)
            #expect(decoded.value == value & ~0xFFFF)
        }
        #expect(throws: DecodeError.badLength(field: "pseudo device address", declared: 5, limit: 6)) {
            try [UInt8](repeating: 0, count: 5).withUnsafeBufferPointer { b throws(DecodeError) in _ = try PseudoDeviceAddress(wire: Span(_unsafeElements: b)) }
        }
    }

    // Core 5.4 Vol 3 Part H Appendix D.7 (ah sample data): IRK ec0234a3 57c8ad05 341010a6 0a397d9b,
    // prand 708194, M = 0…0708194, AES-128 = 159d5fb7 2ebe2311 a48c1bdc c40dfbaa, ah = 0dfbaa.
    @Test func resolvablePrivateAddressSampleData() {
        let irkMSBFirst = inline16(hex("ec0234a357c8ad05341010a60a397d9b"))
        let irk = ResolvablePrivateAddress.reversed(irkMSBFirst)
        let (key, plaintext) = ResolvablePrivateAddress.encryptInput(irk: irk, prand: 0x708194)
        // LE Encrypt parameters are LSB first.
        #expect(bytes(key) == hex("9b7d390aa6101034 05adc857a33402ec"))
        #expect(bytes(plaintext) == hex("948170 00000000000000000000000000"))
        let encrypted = ResolvablePrivateAddress.reversed(inline16(hex("159d5fb72ebe2311a48c1bdcc40dfbaa")))
        let address = ResolvablePrivateAddress.address(prand: 0x708194, encrypted: encrypted)
        #expect(address == BDAddress(displayOrder: 0x70, 0x81, 0x94, 0x0D, 0xFB, 0xAA))
        #expect(address.randomSubtype == .resolvablePrivate)
        #expect(ResolvablePrivateAddress.prand(of: address) == 0x708194)
        #expect(ResolvablePrivateAddress.matches(address, encrypted: encrypted))
        #expect(!ResolvablePrivateAddress.matches(BDAddress(displayOrder: 0x70, 0x81, 0x94, 0x0D, 0xFB, 0xAB), encrypted: encrypted))
    }

    @Test func leEncryptCommandRoundTrip() throws {
        let irk = ResolvablePrivateAddress.reversed(inline16(hex("ec0234a357c8ad05341010a60a397d9b")))
        let command = ResolvablePrivateAddress.encryptCommand(irk: irk, prand: 0x708194)
        var packet = ArraySink()
        command.writePacket(to: &packet)
        // H4 command 0x2017, 32 parameter octets: key then plaintext, LSB first.
        #expect(packet.bytes == hex("011720 20 9b7d390aa610103405adc857a33402ec 94817000000000000000000000000000"))
        // Command Complete return parameters (after the status octet), LSB first.
        let returned = hex("aafb0dc4dc1b8ca41123be2eb75f9d15")
        let result = try returned.withUnsafeBufferPointer { b throws(DecodeError) in
            try HCILEEncrypt.ReturnParameters(parsing: Span(_unsafeElements: b))
        }
        #expect(ResolvablePrivateAddress.address(prand: 0x708194, result: result) == BDAddress(displayOrder: 0x70, 0x81, 0x94, 0x0D, 0xFB, 0xAA))
        #expect(ResolvablePrivateAddress.prand(fromLERand: 0x1122_3344_5566_7788) == 0x66_7788)
    }

    @Test func prandAlwaysMarksResolvable() {
        #expect(ResolvablePrivateAddress.prand(fromRandom: 0xff, 0xff, 0xff) == 0x7F_FFFE)
        #expect(ResolvablePrivateAddress.prand(fromRandom: 0, 0, 0) == 0x40_0001)
        #expect(ResolvablePrivateAddress.prand(fromRandom: 0x12, 0x34, 0x96) == 0x56_3412)
        let a = ResolvablePrivateAddress.address(prand: 0xC0_0000, encrypted: InlineArray(repeating: 0))
        #expect(a.randomSubtype == .resolvablePrivate)
    }
}
