import Testing
@testable import BluetoothHost

@Suite struct GATTCryptoTests {
    func block(_ hex: String) -> AES128.Block {
        let b = attHex(hex)
        var out = AES128.Block(repeating: 0)
        for i in 0..<16 { out[i] = b[i] }
        return out
    }
    func array(_ b: AES128.Block) -> [UInt8] { (0..<16).map { b[$0] } }

    @Test func fips197AppendixCVector() {
        let aes = AES128(key: block("000102030405060708090a0b0c0d0e0f"))
        let out = aes.encrypt(block("00112233445566778899aabbccddeeff"))
        #expect(array(out) == attHex("69c4e0d86a7b0430d8cdb78070b4c55a"))
    }

    /// RFC 4493 section 4 test vectors (key 2b7e1516…, messages of 0, 16, 40 and 64 octets).
    @Test func rfc4493Vectors() {
        let key = block("2b7e151628aed2a6abf7158809cf4f3c")
        let message = attHex("""
            6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51
            30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710
            """)
        let expected: [(Int, String)] = [
            (0, "bb1d6929e95937287fa37d129b756746"),
            (16, "070a16b46b4d4144f79bdd9dd04a287c"),
            (40, "dfa66747de9ae63030ca32611497c827"),
            (64, "51f0bebf7e3b9d92fc49741779363cfe"),
        ]
        for (length, mac) in expected {
            let prefix = Array(message.prefix(length))
            #expect(array(AESCMAC.mac(key: key, message: prefix.span)) == attHex(mac), "length \(length)")
        }
        // Subkey generation (RFC 4493 4, "Subkey Generation").
        let l = AES128(key: key).encrypt(AES128.Block(repeating: 0))
        #expect(array(AESCMAC.doubled(l)) == attHex("fbeed618357133667c85e08f7236a8de"))
        #expect(array(AESCMAC.doubled(AESCMAC.doubled(l))) == attHex("f7ddac306ae266ccf90bc11ee46d513b"))
    }
}
