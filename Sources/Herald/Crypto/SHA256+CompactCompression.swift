// The embedded builds' SHA-256 compression (FIPS 180-4 6.2.2): one rolled loop of 64 rounds over the
// 16-word schedule ring, sharing the round, W(t) expansion and Maj carry with `UnrolledCompression`.
// Why this shape: the firmware hashes a few blocks per key schedule step, so flash, not speed, is
// what it is short of; a single copy of the round is the least code (a 16- or 8-round body with
// rotating roles would be 2-4 times the size for a speed the MCU does not need). The cost is the
// role shuffle at the end of each round (FIPS 180-4 6.2.2 step 3's h = g, ..., a = T1 + T2), plus a
// masked ring index and K(t) loaded from the table instead of being immediates.

/// The embedded builds' compression: one round per loop iteration (see the top of this file).
enum CompactCompression: SHA256.Compression {
    static func compress(_ hv: inout InlineArray<8, UInt32>, _ data: Span<UInt8>, at offset: Int) {
        var w = SHA256.messageBlock(data, at: offset)
        var v = SHA256.WorkingVariables(hv)
        for t in 0..<64 {
            let i = t & 15
            // W(0...15) are the block itself; from t = 16 on, W(t) replaces W(t - 16) in the ring.
            let wt = t < 16 ? w[unchecked: i] : SHA256.expand(&w, i)
            // The round updates d (to the next e) and h (to the next a) in place ...
            SHA256.round(v.a, v.b, v.c, &v.d, v.e, v.f, v.g, &v.h, &v.bc, SHA256.k[unchecked: t] &+ wt)
            // ... so moving every variable one role on is the whole of step 3's reassignment.
            (v.a, v.b, v.c, v.d, v.e, v.f, v.g, v.h) = (v.h, v.a, v.b, v.c, v.d, v.e, v.f, v.g)
        }
        SHA256.addWorkingVariables(v, into: &hv)
    }
}
