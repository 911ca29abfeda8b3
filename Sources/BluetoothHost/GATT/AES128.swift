/// AES-128 block encryption (FIPS-197), encrypt direction only, in portable Swift.
///
/// The host needs it for the GATT Database Hash (AES-CMAC, Core 5.4 Vol 3 Part G 7.3) and for the
/// resolvable private address hash ah() (Core 5.4 Vol 3 Part H 2.2.2). The controller's
/// HCI_LE_Encrypt could do it, but the hash must be computable at start-up before the controller is
/// up and in tests. Bytes are in FIPS-197 order (first octet = most significant); Bluetooth callers
/// that hold little-endian values reverse them. Not constant-time over table lookups; the key used
/// for the database hash is public (all zeros).
public struct AES128: Sendable {
    public typealias Block = InlineArray<16, UInt8>

    /// 11 round keys of 16 octets.
    var roundKeys: InlineArray<176, UInt8>

    public init(key: Block) {
        roundKeys = InlineArray(repeating: 0)
        for i in 0..<16 { roundKeys[i] = key[i] }
        var rcon: UInt8 = 0x01
        var i = 16
        while i < 176 {
            var t0 = roundKeys[i - 4], t1 = roundKeys[i - 3], t2 = roundKeys[i - 2], t3 = roundKeys[i - 1]
            if i % 16 == 0 {
                // RotWord, SubWord, Rcon (FIPS-197 5.2).
                let first = t0
                t0 = Self.sbox[Int(t1)] ^ rcon
                t1 = Self.sbox[Int(t2)]
                t2 = Self.sbox[Int(t3)]
                t3 = Self.sbox[Int(first)]
                rcon = Self.xtime(rcon)
            }
            roundKeys[i] = roundKeys[i - 16] ^ t0
            roundKeys[i + 1] = roundKeys[i - 15] ^ t1
            roundKeys[i + 2] = roundKeys[i - 14] ^ t2
            roundKeys[i + 3] = roundKeys[i - 13] ^ t3
            i += 4
        }
    }

    @inline(__always) static func xtime(_ x: UInt8) -> UInt8 { (x &<< 1) ^ (x & 0x80 != 0 ? 0x1B : 0) }

    public func encrypt(_ input: Block) -> Block {
        var s = input
        addRoundKey(&s, 0)
        for round in 1..<10 {
            subBytesShiftRows(&s)
            mixColumns(&s)
            addRoundKey(&s, round)
        }
        subBytesShiftRows(&s)
        addRoundKey(&s, 10)
        return s
    }

    @inline(__always) func addRoundKey(_ s: inout Block, _ round: Int) {
        for i in 0..<16 { s[i] ^= roundKeys[round * 16 + i] }
    }

    /// State octet `r + 4c` is row r, column c; row r rotates left by r columns.
    func subBytesShiftRows(_ s: inout Block) {
        let old = s
        for c in 0..<4 {
            for r in 0..<4 { s[r + 4 * c] = Self.sbox[Int(old[r + 4 * ((c + r) % 4)])] }
        }
    }

    func mixColumns(_ s: inout Block) {
        for c in 0..<4 {
            let a0 = s[4 * c], a1 = s[4 * c + 1], a2 = s[4 * c + 2], a3 = s[4 * c + 3]
            let all = a0 ^ a1 ^ a2 ^ a3
            s[4 * c] = a0 ^ all ^ Self.xtime(a0 ^ a1)
            s[4 * c + 1] = a1 ^ all ^ Self.xtime(a1 ^ a2)
            s[4 * c + 2] = a2 ^ all ^ Self.xtime(a2 ^ a3)
            s[4 * c + 3] = a3 ^ all ^ Self.xtime(a3 ^ a0)
        }
    }

    static let sbox: InlineArray<256, UInt8> = [
        0x63, 0x7C, 0x77, 0x7B, 0xF2, 0x6B, 0x6F, 0xC5, 0x30, 0x01, 0x67, 0x2B, 0xFE, 0xD7, 0xAB, 0x76,
        0xCA, 0x82, 0xC9, 0x7D, 0xFA, 0x59, 0x47, 0xF0, 0xAD, 0xD4, 0xA2, 0xAF, 0x9C, 0xA4, 0x72, 0xC0,
        0xB7, 0xFD, 0x93, 0x26, 0x36, 0x3F, 0xF7, 0xCC, 0x34, 0xA5, 0xE5, 0xF1, 0x71, 0xD8, 0x31, 0x15,
        0x04, 0xC7, 0x23, 0xC3, 0x18, 0x96, 0x05, 0x9A, 0x07, 0x12, 0x80, 0xE2, 0xEB, 0x27, 0xB2, 0x75,
        0x09, 0x83, 0x2C, 0x1A, 0x1B, 0x6E, 0x5A, 0xA0, 0x52, 0x3B, 0xD6, 0xB3, 0x29, 0xE3, 0x2F, 0x84,
        0x53, 0xD1, 0x00, 0xED, 0x20, 0xFC, 0xB1, 0x5B, 0x6A, 0xCB, 0xBE, 0x39, 0x4A, 0x4C, 0x58, 0xCF,
        0xD0, 0xEF, 0xAA, 0xFB, 0x43, 0x4D, 0x33, 0x85, 0x45, 0xF9, 0x02, 0x7F, 0x50, 0x3C, 0x9F, 0xA8,
        0x51, 0xA3, 0x40, 0x8F, 0x92, 0x9D, 0x38, 0xF5, 0xBC, 0xB6, 0xDA, 0x21, 0x10, 0xFF, 0xF3, 0xD2,
        0xCD, 0x0C, 0x13, 0xEC, 0x5F, 0x97, 0x44, 0x17, 0xC4, 0xA7, 0x7E, 0x3D, 0x64, 0x5D, 0x19, 0x73,
        0x60, 0x81, 0x4F, 0xDC, 0x22, 0x2A, 0x90, 0x88, 0x46, 0xEE, 0xB8, 0x14, 0xDE, 0x5E, 0x0B, 0xDB,
        0xE0, 0x32, 0x3A, 0x0A, 0x49, 0x06, 0x24, 0x5C, 0xC2, 0xD3, 0xAC, 0x62, 0x91, 0x95, 0xE4, 0x79,
        0xE7, 0xC8, 0x37, 0x6D, 0x8D, 0xD5, 0x4E, 0xA9, 0x6C, 0x56, 0xF4, 0xEA, 0x65, 0x7A, 0xAE, 0x08,
        0xBA, 0x78, 0x25, 0x2E, 0x1C, 0xA6, 0xB4, 0xC6, 0xE8, 0xDD, 0x74, 0x1F, 0x4B, 0xBD, 0x8B, 0x8A,
        0x70, 0x3E, 0xB5, 0x66, 0x48, 0x03, 0xF6, 0x0E, 0x61, 0x35, 0x57, 0xB9, 0x86, 0xC1, 0x1D, 0x9E,
        0xE1, 0xF8, 0x98, 0x11, 0x69, 0xD9, 0x8E, 0x94, 0x9B, 0x1E, 0x87, 0xE9, 0xCE, 0x55, 0x28, 0xDF,
        0x8C, 0xA1, 0x89, 0x0D, 0xBF, 0xE6, 0x42, 0x68, 0x41, 0x99, 0x2D, 0x0F, 0xB0, 0x54, 0xBB, 0x16,
    ]
}

/// AES-CMAC with AES-128 (RFC 4493), streaming: it is a `ByteSink`, so a message can be serialised
/// straight into it (the GATT Database Hash feeds attributes one by one, Core 5.4 Vol 3 Part G 7.3.1).
public struct AESCMAC: ByteSink, Sendable {
    let cipher: AES128
    var x: AES128.Block = InlineArray(repeating: 0)
    var buffer: AES128.Block = InlineArray(repeating: 0)
    var buffered = 0

    public init(key: AES128.Block) { cipher = AES128(key: key) }

    public mutating func append(_ byte: UInt8) {
        // The last block is treated differently, so a full block is only processed once more input
        // proves it is not the last (RFC 4493 2.4).
        if buffered == 16 {
            for i in 0..<16 { x[i] ^= buffer[i] }
            x = cipher.encrypt(x)
            buffered = 0
        }
        buffer[buffered] = byte
        buffered += 1
    }

    /// The 16-octet MAC (most significant octet first).
    public func finalize() -> AES128.Block {
        // Subkeys (RFC 4493 2.3).
        let l = cipher.encrypt(InlineArray(repeating: 0))
        let k1 = Self.doubled(l)
        var last = buffer
        let key: AES128.Block
        if buffered == 16 {
            key = k1
        } else {
            key = Self.doubled(k1)
            last[buffered] = 0x80
            for i in (buffered + 1)..<16 { last[i] = 0 }
        }
        var y = x
        for i in 0..<16 { y[i] ^= last[i] ^ key[i] }
        return cipher.encrypt(y)
    }

    /// Multiplication by x in GF(2^128): shift left one bit, reduce with 0x87.
    static func doubled(_ b: AES128.Block) -> AES128.Block {
        var out = b
        for i in 0..<16 {
            let next: UInt8 = i < 15 ? b[i + 1] &>> 7 : 0
            out[i] = (b[i] &<< 1) | next
        }
        if b[0] & 0x80 != 0 { out[15] ^= 0x87 }
        return out
    }

    /// One-shot MAC of `message`.
    public static func mac(key: AES128.Block, message: Span<UInt8>) -> AES128.Block {
        var c = AESCMAC(key: key)
        c.append(contentsOf: message)
        return c.finalize()
    }
}
