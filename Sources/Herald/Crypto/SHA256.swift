import BluetoothHost

/// SHA-256 (FIPS 180-4 section 6.2), streaming and allocation-free.
///
/// The Simple payload's key schedule (Herald Simple payload specification, "Key derivation") is a
/// chain of SHA-256 calls, so the core needs its own hash: the MCU has no library, and the host must
/// derive millions of contact identifiers per second when matching. State, the partial block and the
/// message schedule all live inline; `update` never copies the input.
public struct SHA256: Sendable {
    public static let digestSize = 32
    public static let blockSize = 64

    /// Hash value H (FIPS 180-4 5.3.3 initial value, then updated per block).
    var h0: UInt32 = 0x6a09e667, h1: UInt32 = 0xbb67ae85, h2: UInt32 = 0x3c6ef372, h3: UInt32 = 0xa54ff53a
    var h4: UInt32 = 0x510e527f, h5: UInt32 = 0x9b05688c, h6: UInt32 = 0x1f83d9ab, h7: UInt32 = 0x5be0cd19
    /// Bytes waiting for a full 64-byte block.
    var block = InlineArray<64, UInt8>(repeating: 0)
    var blockCount = 0
    /// Message length so far, in bytes (the padding needs it in bits, FIPS 180-4 5.1.1).
    var totalBytes: UInt64 = 0

    public init() {}

    /// Round constants K (FIPS 180-4 4.2.2).
    static let k: InlineArray<64, UInt32> = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    public mutating func update(_ data: Span<UInt8>) {
        totalBytes &+= UInt64(widening: UInt(data.count))
        var i = 0
        // Top up a partial block first.
        if blockCount > 0 {
            while blockCount < 64 && i < data.count { block[blockCount] = data[i]; blockCount += 1; i += 1 }
            if blockCount < 64 { return }
            let full = block
            compress(full.span, at: 0)
            blockCount = 0
        }
        // Whole blocks straight from the caller's buffer.
        while data.count - i >= 64 {
            compress(data, at: i)
            i += 64
        }
        while i < data.count { block[blockCount] = data[i]; blockCount += 1; i += 1 }
    }

    public mutating func update(byte: UInt8) {
        totalBytes &+= 1
        block[blockCount] = byte
        blockCount += 1
        if blockCount == 64 {
            let full = block
            compress(full.span, at: 0)
            blockCount = 0
        }
    }

    /// Pads (FIPS 180-4 5.1.1: a 1 bit, zeros, the 64-bit big-endian bit length) and returns the digest.
    public consuming func finalize() -> InlineArray<32, UInt8> {
        let bitLength = totalBytes &<< 3
        block[blockCount] = 0x80
        blockCount += 1
        if blockCount > 56 {
            while blockCount < 64 { block[blockCount] = 0; blockCount += 1 }
            let full = block
            compress(full.span, at: 0)
            blockCount = 0
        }
        while blockCount < 56 { block[blockCount] = 0; blockCount += 1 }
        for j in 0..<8 { block[56 + j] = UInt8(truncatingIfNeeded: bitLength &>> UInt64(widening: UInt(56 - 8 * j))) }
        let last = block
        compress(last.span, at: 0)
        return digest
    }

    /// One-shot digest of `data`.
    public static func hash(_ data: Span<UInt8>) -> InlineArray<32, UInt8> {
        if data.count <= 55 { return hashSingleBlock(data) }
        var s = SHA256()
        s.update(data)
        return s.finalize()
    }

    /// Messages of at most 55 bytes pad into one block: build it directly and compress once. The key
    /// schedule hashes only 16- and 32-byte messages, so this is the hot path of matching.
    static func hashSingleBlock(_ data: Span<UInt8>) -> InlineArray<32, UInt8> {
        var block = InlineArray<64, UInt8>(repeating: 0)
        for i in 0..<data.count { block[i] = data[i] }
        block[data.count] = 0x80
        let bits = UInt32(truncatingIfNeeded: data.count) &<< 3
        block[62] = UInt8(truncatingIfNeeded: bits &>> 8)
        block[63] = UInt8(truncatingIfNeeded: bits)
        var s = SHA256()
        s.compress(block.span, at: 0)
        return s.digest
    }

    var digest: InlineArray<32, UInt8> {
        var out = InlineArray<32, UInt8>(repeating: 0)
        let words: InlineArray<8, UInt32> = [h0, h1, h2, h3, h4, h5, h6, h7]
        for w in 0..<8 {
            let v = words[w]
            out[4 * w] = UInt8(truncatingIfNeeded: v &>> 24)
            out[4 * w + 1] = UInt8(truncatingIfNeeded: v &>> 16)
            out[4 * w + 2] = UInt8(truncatingIfNeeded: v &>> 8)
            out[4 * w + 3] = UInt8(truncatingIfNeeded: v)
        }
        return out
    }

    @inline(__always) static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &>> n) | (x &<< (32 &- n)) }

    /// The compression function over the 64 bytes at `offset` (FIPS 180-4 6.2.2), with the message
    /// schedule kept as a 16-word ring so the working set stays small on the MCU.
    mutating func compress(_ data: Span<UInt8>, at offset: Int) {
        // One bounds check for the block, then unchecked access: indices below are all in range by
        // construction (t < 64, ring indices masked to 0..<16).
        precondition(offset >= 0 && data.count - offset >= 64)
        var w = InlineArray<16, UInt32>(repeating: 0)
        for t in 0..<16 {
            let o = offset + 4 * t
            w[unchecked: t] = UInt32(data[unchecked: o]) &<< 24 | UInt32(data[unchecked: o + 1]) &<< 16
                | UInt32(data[unchecked: o + 2]) &<< 8 | UInt32(data[unchecked: o + 3])
        }
        var a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7
        for t in 0..<64 {
            let wt: UInt32
            if t < 16 {
                wt = w[unchecked: t]
            } else {
                let w15 = w[unchecked: (t &- 15) & 15], w2 = w[unchecked: (t &- 2) & 15]
                let s0 = Self.rotr(w15, 7) ^ Self.rotr(w15, 18) ^ (w15 &>> 3)
                let s1 = Self.rotr(w2, 17) ^ Self.rotr(w2, 19) ^ (w2 &>> 10)
                wt = w[unchecked: t & 15] &+ s0 &+ w[unchecked: (t &- 7) & 15] &+ s1
                w[unchecked: t & 15] = wt
            }
            let bigS1 = Self.rotr(e, 6) ^ Self.rotr(e, 11) ^ Self.rotr(e, 25)
            let ch = (e & f) ^ (~e & g)
            let t1 = h &+ bigS1 &+ ch &+ Self.k[unchecked: t] &+ wt
            let bigS0 = Self.rotr(a, 2) ^ Self.rotr(a, 13) ^ Self.rotr(a, 22)
            let maj = (a & b) ^ (a & c) ^ (b & c)
            let t2 = bigS0 &+ maj
            h = g; g = f; f = e; e = d &+ t1
            d = c; c = b; b = a; a = t1 &+ t2
        }
        h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d; h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= h
    }
}
