import Testing
import BluetoothHost
@testable import Herald

/// The two compression functions (SHA256+Compression.swift): hosted builds use the unrolled one and
/// embedded builds the compact one, so the host tests run every vector through each explicitly.
enum CompressionVariant: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case unrolled, compact

    var testDescription: String { rawValue }

    func compress(_ hv: inout InlineArray<8, UInt32>, _ block: [UInt8]) {
        block.withUnsafeBufferPointer {
            switch self {
            case .unrolled: UnrolledCompression.compress(&hv, Span(_unsafeElements: $0), at: 0)
            case .compact: CompactCompression.compress(&hv, Span(_unsafeElements: $0), at: 0)
            }
        }
    }

    /// One-shot digest, as hex.
    func digest(_ message: [UInt8]) -> String {
        message.withUnsafeBufferPointer {
            let span = Span(_unsafeElements: $0)
            switch self {
            case .unrolled: return hexString(bytes(SHA256.hash(span, using: UnrolledCompression.self)))
            case .compact: return hexString(bytes(SHA256.hash(span, using: CompactCompression.self)))
            }
        }
    }

    /// Streamed digest, as hex: `message` fed to `update` in pieces ending at each of `cuts` (sorted;
    /// cuts past the end are clamped, so short messages get empty pieces).
    func digest(_ message: [UInt8], cuts: [Int]) -> String {
        var s = SHA256()
        var from = 0
        message.withUnsafeBufferPointer { all in
            for to in cuts.map({ min($0, message.count) }) + [message.count] where to >= from {
                let piece = Span(_unsafeElements: UnsafeBufferPointer(rebasing: all[from..<to]))
                switch self {
                case .unrolled: s.update(piece, using: UnrolledCompression.self)
                case .compact: s.update(piece, using: CompactCompression.self)
                }
                from = to
            }
        }
        switch self {
        case .unrolled: return hexString(bytes(s.finalize(using: UnrolledCompression.self)))
        case .compact: return hexString(bytes(s.finalize(using: CompactCompression.self)))
        }
    }
}

@Suite struct SHA256Tests {
    func digest(_ message: [UInt8]) -> String {
        message.withUnsafeBufferPointer { hexString(bytes(SHA256.hash(Span(_unsafeElements: $0)))) }
    }

    /// Deterministic bytes (xorshift), so failures reproduce.
    static func pseudoRandom(_ count: Int, state: inout UInt64) -> [UInt8] {
        (0..<count).map { _ in
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return UInt8(truncatingIfNeeded: state >> 32)
        }
    }

    static let message448 = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
    static let message896 = Array(("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
        + "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu").utf8)

    /// The compression function alone, block by block, against the intermediate hash values of the
    /// FIPS 180-4 examples (NIST CSRC "SHA256.pdf"): "abc" is one padded block, so H(1) is the
    /// digest; the 448-bit message's first block (message, 1 bit, zeros) gives H(1) = 85e655d6...
    @Test(arguments: CompressionVariant.allCases)
    func compressionMatchesFIPSIntermediateValues(_ variant: CompressionVariant) {
        var abc = [UInt8](repeating: 0, count: 64)
        abc[0] = 0x61; abc[1] = 0x62; abc[2] = 0x63; abc[3] = 0x80; abc[63] = 24
        var hv = SHA256.initialHashValue
        variant.compress(&hv, abc)
        #expect((0..<8).map { hv[$0] } == [0xba7816bf, 0x8f01cfea, 0x414140de, 0x5dae2223,
                                             0xb00361a3, 0x96177a9c, 0xb410ff61, 0xf20015ad])

        var first = Self.message448 + [0x80]
        first += [UInt8](repeating: 0, count: 64 - first.count)
        hv = SHA256.initialHashValue
        variant.compress(&hv, first)
        #expect((0..<8).map { hv[$0] } == [0x85e655d6, 0x417a1795, 0x3363376a, 0x624cde5c,
                                             0x76e09589, 0xcac5f811, 0xcc4b32c1, 0xf20e533a])
        // Block 2: zeros and the length, 448 (FIPS 180-4 5.1.1); H(2) is the digest.
        var second = [UInt8](repeating: 0, count: 64)
        second[62] = 0x01; second[63] = 0xc0
        variant.compress(&hv, second)
        #expect((0..<8).map { hv[$0] } == [0x248d6a61, 0xd20638b8, 0xe5c02693, 0x0c3e6039,
                                             0xa33ce459, 0x64ff2167, 0xf6ecedd4, 0x19db06c1])
    }

    /// FIPS 180-4 examples and NIST's SHA-256 test vectors (empty, "abc", the 448- and 896-bit
    /// messages), one-shot and streamed in uneven pieces.
    @Test(arguments: CompressionVariant.allCases)
    func fipsVectors(_ variant: CompressionVariant) {
        let vectors: [([UInt8], String)] = [
            ([], "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            (Array("abc".utf8), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (Self.message448, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
            (Self.message896, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
        ]
        #expect(Self.message448.count * 8 == 448 && Self.message896.count * 8 == 896)
        for (m, hex) in vectors {
            #expect(variant.digest(m) == hex, "one-shot, \(m.count) octets")
            #expect(variant.digest(m, cuts: [1, 7, 70, 71]) == hex, "streamed, \(m.count) octets")
        }
    }

    /// NIST's long vector: a million 'a' (15,625 whole blocks, then a padding-only block), fed in
    /// 997-octet pieces so most blocks are completed from the partial-block buffer.
    @Test(arguments: CompressionVariant.allCases)
    func millionAInUnevenChunks(_ variant: CompressionVariant) {
        let m = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(variant.digest(m, cuts: Array(stride(from: 997, to: 1_000_000, by: 997)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// The two variants against each other on random messages: every length 0...200 (all padding
    /// cases, one to four blocks) and 200 random lengths up to 4,096, one-shot and streamed with
    /// random cut points that land inside, on and across block boundaries.
    @Test func variantsAgreeOnRandomLengths() {
        var state: UInt64 = 0x9e37_79b9_7f4a_7c15
        var lengths = Array(0...200)
        for _ in 0..<200 {
            let r = Self.pseudoRandom(2, state: &state)
            lengths.append((Int(r[0]) << 8 | Int(r[1])) % 4097)
        }
        for n in lengths {
            let m = Self.pseudoRandom(n, state: &state)
            let cuts = Self.pseudoRandom(3, state: &state).map { n == 0 ? 0 : Int($0) * n / 256 }.sorted()
            let unrolled = CompressionVariant.unrolled.digest(m)
            #expect(CompressionVariant.compact.digest(m) == unrolled, "one-shot, length \(n)")
            #expect(CompressionVariant.compact.digest(m, cuts: cuts) == unrolled, "streamed, length \(n), cuts \(cuts)")
            #expect(CompressionVariant.unrolled.digest(m, cuts: cuts) == unrolled, "streamed, length \(n), cuts \(cuts)")
            // And the build's own choice (the unrolled one on the host) through the public API.
            #expect(digest(m) == unrolled, "public hash, length \(n)")
        }
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
    @Test(arguments: CompressionVariant.allCases)
    func blockBoundaryLengthsMatchHashlib(_ variant: CompressionVariant) {
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
            #expect(variant.digest(m) == hex, "one-shot, length \(n)")
            // The same message through update in two uneven pieces, so the partial-block path runs too.
            #expect(variant.digest(m, cuts: [n / 3]) == hex, "streamed, length \(n)")
        }
        // The public API (the build's variant) agrees.
        #expect(digest((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }) == expected[7].1)
    }
}
