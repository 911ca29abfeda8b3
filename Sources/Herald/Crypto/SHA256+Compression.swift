// The SHA-256 compression function (FIPS 180-4 6.2.2) in two shapes, chosen at compile time:
// - hosted builds use `UnrolledCompression` (this file), shaped for speed in plain Swift:
//   - the block is read with big-endian 32-bit loads, checked once;
//   - the message schedule is a 16-word ring, W(t) computed in the round that consumes it;
//   - the eight working variables stay in locals, and instead of the shuffle at the end of each round
//     (h = g, g = f, ...) the roles rotate through eight differently-argumented copies of the round;
//   - all 64 rounds are inlined with constant indices: no ring index is masked or checked at run time,
//     and K(t) become immediates.
//   Why fully unrolled: the host's matching derives millions of identifiers per second through this
//   function, and x86-64 without SHA extensions is bound by integer ALU operations (~2,100 per block,
//   near the minimum for FIPS 180-4's formulas); a 16-round loop measured 7-10 % slower, an 8-round
//   loop about 20 % slower.
// - Embedded Swift builds (the firmware) use `CompactCompression` (SHA256+CompactCompression.swift):
//   the same round and schedule as one rolled loop. The unrolled shape costs about 6.4 KB of Thumb-2
//   at -Osize, a tenth of the wearable's 64 KB flash, while the MCU hashes in short bursts (a day's
//   matching key walks up to 2,001 one-block hashes, a period's contact key up to 482; see
//   SimpleKeySchedule): about a tenth of a second at 64 MHz even at several thousand cycles per
//   block, so there size wins.
// Both are compiled in every build and both are tested on the host against the FIPS 180-4 examples;
// only `SHA256.compress` picks one. Portable by construction (no intrinsics, no per-architecture
// code), so host tests cover the MCU's code.

extension SHA256 {
    /// One implementation of the compression function H(i) = f(H(i-1), M(i)) (FIPS 180-4 6.2.2):
    /// compresses the 64 bytes of `data` at `offset` into `hv`. A protocol, not a flag, so the choice
    /// is made when generics are specialised and the unused variant is not linked.
    protocol Compression {
        static func compress(_ hv: inout InlineArray<8, UInt32>, _ data: Span<UInt8>, at offset: Int)
    }

    // `Embedded` is the experimental feature every embedded build enables (Tools/embedded-check,
    // Firmware); hosted builds (SwiftPM, tests, benchmarks) do not.
    #if hasFeature(Embedded)
    typealias BuildCompression = CompactCompression
    #else
    typealias BuildCompression = UnrolledCompression
    #endif

    /// The compression function of this build (see the top of this file).
    @inline(__always)
    static func compress(_ hv: inout InlineArray<8, UInt32>, _ data: Span<UInt8>, at offset: Int) {
        BuildCompression.compress(&hv, data, at: offset)
    }

    /// W(0...15): the block as big-endian words (FIPS 180-4 3.1, 5.2.1), after one range check.
    @inline(__always)
    static func messageBlock(_ data: Span<UInt8>, at offset: Int) -> InlineArray<16, UInt32> {
        precondition(offset >= 0 && data.count &- offset >= 64)
        let bytes = data.bytes
        var w = InlineArray<16, UInt32>(repeating: 0)
        for t in 0..<16 {
            // Unchecked: the precondition above puts all 64 octets of the block inside `data`.
            let word = bytes.unsafeLoadUnaligned(fromUncheckedByteOffset: offset &+ 4 &* t, as: UInt32.self)
            w[unchecked: t] = UInt32(bigEndian: word)
        }
        return w
    }

    /// Working variables a...h (FIPS 180-4 6.2.2 step 2) and b ^ c, carried from round to round so
    /// Maj needs three operations (Maj(a, b, c) = b ^ ((a ^ b) & (b ^ c)); the next round's b ^ c is
    /// this round's a ^ b).
    struct WorkingVariables {
        var a, b, c, d, e, f, g, h: UInt32
        var bc: UInt32

        @inline(__always) init(_ hv: InlineArray<8, UInt32>) {
            a = hv[unchecked: 0]; b = hv[unchecked: 1]; c = hv[unchecked: 2]; d = hv[unchecked: 3]
            e = hv[unchecked: 4]; f = hv[unchecked: 5]; g = hv[unchecked: 6]; h = hv[unchecked: 7]
            bc = b ^ c
        }
    }

    @inline(__always) static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &>> n) | (x &<< (32 &- n)) }

    /// One round (FIPS 180-4 6.2.2 step 3) with the roles of a...h passed in: only d and h change
    /// (d + T1 is the next e, T1 + T2 the next a). `kw` is K(t) + W(t).
    @inline(__always)
    static func round(_ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32,
                      _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32,
                      _ bc: inout UInt32, _ kw: UInt32) {
        let bigSigma1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
        let ch = g ^ (e & (f ^ g))
        // h + K + W does not depend on the previous round; adding it first keeps e's path short.
        let t1 = ((h &+ kw) &+ ch) &+ bigSigma1
        let bigSigma0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
        let ab = a ^ b
        let maj = b ^ (ab & bc)
        bc = ab
        d &+= t1
        h = t1 &+ (bigSigma0 &+ maj)
    }

    /// W(t) for t >= 16 (FIPS 180-4 6.2.2 step 1), written over W(t - 16) in the ring; `i` = t mod 16.
    @inline(__always)
    static func expand(_ w: inout InlineArray<16, UInt32>, _ i: Int) -> UInt32 {
        let w15 = w[unchecked: (i &+ 1) & 15], w2 = w[unchecked: (i &+ 14) & 15]
        let sigma0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 &>> 3)
        let sigma1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 &>> 10)
        let wt = w[unchecked: i] &+ sigma0 &+ w[unchecked: (i &+ 9) & 15] &+ sigma1
        w[unchecked: i] = wt
        return wt
    }

    /// Rounds t ..< t + 8 over ring words j ..< j + 8 (j is 0 or 8, a constant at every call site).
    @inline(__always)
    static func eightRounds(_ v: inout WorkingVariables, _ w: inout InlineArray<16, UInt32>,
                            t: Int, j: Int, expanding: Bool) {
        @inline(__always) func kw(_ i: Int) -> UInt32 {
            k[unchecked: t &+ i] &+ (expanding ? expand(&w, j &+ i) : w[unchecked: j &+ i])
        }
        round(v.a, v.b, v.c, &v.d, v.e, v.f, v.g, &v.h, &v.bc, kw(0))
        round(v.h, v.a, v.b, &v.c, v.d, v.e, v.f, &v.g, &v.bc, kw(1))
        round(v.g, v.h, v.a, &v.b, v.c, v.d, v.e, &v.f, &v.bc, kw(2))
        round(v.f, v.g, v.h, &v.a, v.b, v.c, v.d, &v.e, &v.bc, kw(3))
        round(v.e, v.f, v.g, &v.h, v.a, v.b, v.c, &v.d, &v.bc, kw(4))
        round(v.d, v.e, v.f, &v.g, v.h, v.a, v.b, &v.c, &v.bc, kw(5))
        round(v.c, v.d, v.e, &v.f, v.g, v.h, v.a, &v.b, &v.bc, kw(6))
        round(v.b, v.c, v.d, &v.e, v.f, v.g, v.h, &v.a, &v.bc, kw(7))
    }

    /// H(i) = H(i-1) + working variables (FIPS 180-4 6.2.2 step 4).
    @inline(__always)
    static func addWorkingVariables(_ v: WorkingVariables, into hv: inout InlineArray<8, UInt32>) {
        hv[unchecked: 0] &+= v.a; hv[unchecked: 1] &+= v.b; hv[unchecked: 2] &+= v.c; hv[unchecked: 3] &+= v.d
        hv[unchecked: 4] &+= v.e; hv[unchecked: 5] &+= v.f; hv[unchecked: 6] &+= v.g; hv[unchecked: 7] &+= v.h
    }
}

/// The hosted builds' compression: all 64 rounds inline (see the top of this file for why).
enum UnrolledCompression: SHA256.Compression {
    static func compress(_ hv: inout InlineArray<8, UInt32>, _ data: Span<UInt8>, at offset: Int) {
        var w = SHA256.messageBlock(data, at: offset)
        var v = SHA256.WorkingVariables(hv)
        // All 64 rounds inline: K(t) become immediates, and nothing is kept for a loop.
        SHA256.eightRounds(&v, &w, t: 0, j: 0, expanding: false)
        SHA256.eightRounds(&v, &w, t: 8, j: 8, expanding: false)
        SHA256.eightRounds(&v, &w, t: 16, j: 0, expanding: true)
        SHA256.eightRounds(&v, &w, t: 24, j: 8, expanding: true)
        SHA256.eightRounds(&v, &w, t: 32, j: 0, expanding: true)
        SHA256.eightRounds(&v, &w, t: 40, j: 8, expanding: true)
        SHA256.eightRounds(&v, &w, t: 48, j: 0, expanding: true)
        SHA256.eightRounds(&v, &w, t: 56, j: 8, expanding: true)
        SHA256.addWorkingVariables(v, into: &hv)
    }
}
