import Testing
import BluetoothHost
@testable import Herald

@Suite struct SHA256Tests {
    func digest(_ message: [UInt8]) -> String {
        message.withUnsafeBufferPointer { hexString(bytes(SHA256.hash(Span(_unsafeElements: $0)))) }
    }

    // FIPS 180-4 examples (NIST CSRC "SHA256.pdf" example values).
    @Test func abc() {
        #expect(digest(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func twoBlockMessage448Bits() {
        let m = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(m.count * 8 == 448)
        #expect(digest(m) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func empty() {
        #expect(digest([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test func millionAInUnevenChunks() {
        var s = SHA256()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 997)
        var fed = 0
        while fed < 1_000_000 {
            let n = min(chunk.count, 1_000_000 - fed)
            chunk.withUnsafeBufferPointer { s.update(Span(_unsafeElements: UnsafeBufferPointer(rebasing: $0[0..<n]))) }
            fed += n
        }
        #expect(hexString(bytes(s.finalize())) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func byteAtATimeMatchesOneShot() {
        // 55, 56 and 64 bytes straddle the padding boundaries.
        for n in [55, 56, 63, 64, 65, 119, 120, 128] {
            let m = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            var s = SHA256()
            for b in m { s.update(byte: b) }
            #expect(hexString(bytes(s.finalize())) == digest(m), "length \(n)")
        }
    }

    @Test func secretKeyOfZerosMatchesVectorReadme() {
        #expect(digest([UInt8](repeating: 0, count: 2048)) == "e5a00aa9991ac8a5ee3109844d84a55583bd20572ad3ffcd42792f3c36b183ad")
    }
}
