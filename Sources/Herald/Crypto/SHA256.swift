import BluetoothHost

/// SHA-256 (FIPS 180-4 section 6.2), streaming and allocation-free.
///
/// The Simple payload's key schedule (Herald Simple payload specification, "Key derivation") is a
/// chain of SHA-256 calls, so the core needs its own hash: the MCU has no library, and the host must
/// derive millions of contact identifiers per second when matching. State, the partial block and the
/// message schedule all live inline; `update` and `hash` never copy whole blocks of the input.
public struct SHA256: Sendable {
    public static let digestSize = 32
    public static let blockSize = 64

    /// Hash value H(i) (FIPS 180-4 5.3.3 initial value H(0), then updated per block).
    var hashValue: InlineArray<8, UInt32> = Self.initialHashValue
    /// Bytes waiting for a full 64-byte block.
    var block = InlineArray<64, UInt8>(repeating: 0)
    var blockCount = 0
    /// Message length so far, in bytes (the padding needs it in bits, FIPS 180-4 5.1.1).
    var totalBytes: UInt64 = 0

    public init() {}

    /// H(0) (FIPS 180-4 5.3.3).
    static let initialHashValue: InlineArray<8, UInt32> = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    ]

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

    public mutating func update(_ data: Span<UInt8>) { update(data, using: BuildCompression.self) }

    /// `update` with a given compression variant (the public one uses the build's; tests run both).
    mutating func update<C: Compression>(_ data: Span<UInt8>, using _: C.Type) {
        totalBytes &+= UInt64(widening: UInt(data.count))
        var i = 0
        // Top up a partial block first.
        if blockCount > 0 {
            i = min(64 &- blockCount, data.count)
            Self.copy(data, from: 0, count: i, into: &block, at: blockCount)
            blockCount &+= i
            if blockCount < 64 { return }
            C.compress(&hashValue, block.span, at: 0)
            blockCount = 0
        }
        // Whole blocks straight from the caller's buffer.
        while data.count &- i >= 64 {
            C.compress(&hashValue, data, at: i)
            i &+= 64
        }
        Self.copy(data, from: i, count: data.count &- i, into: &block, at: 0)
        blockCount = data.count &- i
    }

    public mutating func update(byte: UInt8) {
        totalBytes &+= 1
        block[blockCount] = byte
        blockCount += 1
        if blockCount == 64 {
            Self.compress(&hashValue, block.span, at: 0)
            blockCount = 0
        }
    }

    /// Pads and returns the digest.
    public consuming func finalize() -> InlineArray<32, UInt8> { finalize(using: BuildCompression.self) }

    consuming func finalize<C: Compression>(using _: C.Type) -> InlineArray<32, UInt8> {
        var hv = hashValue
        Self.finish(&hv, tail: block.span, from: 0, count: blockCount, totalBytes: totalBytes, using: C.self)
        return Self.digest(hv)
    }

    /// One-shot digest of `data`: whole blocks are compressed where they lie, and only the tail is
    /// copied, once, into the padded final block.
    public static func hash(_ data: Span<UInt8>) -> InlineArray<32, UInt8> { hash(data, using: BuildCompression.self) }

    /// `hash` with the compact compression whatever the build, for the benchmarks' side-by-side figure
    /// on the host (where `hash` is the unrolled one). Being public, it is also emitted, and so checked
    /// by -no-allocations, in every embedded build.
    @_spi(Benchmarks)
    public static func hashCompact(_ data: Span<UInt8>) -> InlineArray<32, UInt8> { hash(data, using: CompactCompression.self) }

    static func hash<C: Compression>(_ data: Span<UInt8>, using _: C.Type) -> InlineArray<32, UInt8> {
        var hv = initialHashValue
        let whole = data.count & ~63
        var i = 0
        while i < whole {
            C.compress(&hv, data, at: i)
            i &+= 64
        }
        finish(&hv, tail: data, from: whole, count: data.count &- whole, totalBytes: UInt64(widening: UInt(data.count)),
               using: C.self)
        return digest(hv)
    }

    /// The last one or two blocks (FIPS 180-4 5.1.1): the `count` < 64 message bytes of `tail` at
    /// `from`, a 1 bit, zeros, and the message length in bits as a 64-bit big-endian integer.
    static func finish<C: Compression>(_ hv: inout InlineArray<8, UInt32>, tail: Span<UInt8>, from: Int, count: Int,
                                       totalBytes: UInt64, using _: C.Type) {
        var last = InlineArray<64, UInt8>(repeating: 0)
        copy(tail, from: from, count: count, into: &last, at: 0)
        last[count] = 0x80
        // No room for the 8 length bytes after the 1 bit: this block ends with zeros, the next
        // holds only zeros and the length.
        if count >= 56 {
            C.compress(&hv, last.span, at: 0)
            last = InlineArray(repeating: 0)
        }
        // Least significant octet last, shifting a constant 8 bits at a time (a 64-bit shift by a
        // variable amount is a runtime-library call on a 32-bit core).
        var bitLength = totalBytes &<< 3
        for j in (56..<64).reversed() {
            last[j] = UInt8(truncatingIfNeeded: bitLength)
            bitLength = bitLength &>> 8
        }
        C.compress(&hv, last.span, at: 0)
    }

    /// H(N) as the digest: the eight words big-endian (FIPS 180-4 6.2.2 step 4 and 6.2).
    static func digest(_ hv: InlineArray<8, UInt32>) -> InlineArray<32, UInt8> {
        var out = InlineArray<32, UInt8>(repeating: 0)
        for w in 0..<8 {
            let v = hv[w]
            out[4 &* w] = UInt8(truncatingIfNeeded: v &>> 24)
            out[4 &* w &+ 1] = UInt8(truncatingIfNeeded: v &>> 16)
            out[4 &* w &+ 2] = UInt8(truncatingIfNeeded: v &>> 8)
            out[4 &* w &+ 3] = UInt8(truncatingIfNeeded: v)
        }
        return out
    }

    /// `count` bytes of `source` from `from` into `target` at `at`; one range check, then a plain loop.
    @inline(__always)
    static func copy(_ source: Span<UInt8>, from: Int, count: Int, into target: inout InlineArray<64, UInt8>, at: Int) {
        precondition(count >= 0 && from >= 0 && source.count &- from >= count && at >= 0 && 64 &- at >= count)
        for j in 0..<count { target[unchecked: at &+ j] = source[unchecked: from &+ j] }
    }
}
