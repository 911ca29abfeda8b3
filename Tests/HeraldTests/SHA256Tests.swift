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

    /// Lengths around the padding and block boundaries (FIPS 180-4 5.1.1): 55 is the longest message
    /// padded within one block, 56...63 push the length into a second block, 64 is a whole block plus
    /// a padding-only block, and 1,000 is many blocks plus a tail. Byte i of each message is 7i + 1 mod 256.
    /// Expected digests computed with Python's hashlib:
    ///   hashlib.sha256(bytes((i * 7 + 1) & 255 for i in range(n))).hexdigest()
    @Test func blockBoundaryLengthsMatchHashlib() {
        let expected: [(Int, String)] = [
            (55, "16fa57a0a3423a715d594516339f36189d6b5f93754a9714fef202616a9fabfe"),
            (56, "c37b44e5f1b18554b36966f4f8e08bfbf3164c4b6c10374d12d89850892073c5"),
            (63, "bbba992d2c85af960fb2987a1fd05e0aa82a3db3c740dd8982a9e273b75e36a3"),
            (64, "66bd4633ed6f71c4ecfa4763bf7ba1c8ec7612de9aa6c0578a7b675207c71e0b"),
            (65, "9f7dc47107b750a1f3d35db5d9547f24ef40da5b731b9540d4f43710a154f6c9"),
            (119, "a3ed307b730fa77c07531300c6e4a282330011d4d4caf6bb7b63ae05950f4b66"),
            (120, "8e3b15d9fea7472655aa069620b7f8c2e55ee1499f763200a7515fe826e99d20"),
            (1000, "095ecb62e30793ab4b954cd6a0586d0cc91f7ea5b1332694d8da780e98676d78"),
        ]
        for (n, hex) in expected {
            let m = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
            #expect(digest(m) == hex, "one-shot, length \(n)")
            // The same message through update in two uneven pieces, so the partial-block path runs too.
            var s = SHA256()
            m.withUnsafeBufferPointer {
                s.update(Span(_unsafeElements: UnsafeBufferPointer(rebasing: $0[0..<(n / 3)])))
                s.update(Span(_unsafeElements: UnsafeBufferPointer(rebasing: $0[(n / 3)...])))
            }
            #expect(hexString(bytes(s.finalize())) == hex, "streamed, length \(n)")
        }
    }
}
