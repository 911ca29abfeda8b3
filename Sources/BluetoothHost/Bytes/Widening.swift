// Integer widening that is safe on 32-bit Embedded Swift.
//
// On armv7em with -no-allocations, `UInt64(x)`, `Int64(x)` and `Int(x)` for an `Int64` go through the
// generic BinaryInteger path, which builds `words` as an Array and fails the gate. These helpers widen
// through `_truncatingBits` (a plain zero-extension) and sign-extend by hand. Narrowing with
// `truncatingIfNeeded:` is already safe.

extension UInt64 {
    @inline(__always) public init(widening x: UInt8) { self.init(_truncatingBits: UInt(x)) }
    @inline(__always) public init(widening x: UInt16) { self.init(_truncatingBits: UInt(x)) }
    @inline(__always) public init(widening x: UInt32) { self.init(_truncatingBits: UInt(x)) }
    @inline(__always) public init(widening x: UInt) { self.init(_truncatingBits: x) }
}

extension Int64 {
    /// Sign-extends `x` (32 or 64 bits wide depending on the platform).
    @inline(__always) public init(widening x: Int) {
        let low = UInt64(_truncatingBits: UInt(bitPattern: x))
        // On a 32-bit target the upper half is zero; fill it for negative values.
        self = Int64(bitPattern: x < 0 ? low | ~UInt64(_truncatingBits: UInt.max) : low)
    }
    @inline(__always) public init(widening x: Int32) { self.init(widening: Int(x)) }
}

extension Int {
    /// `Int64` narrowed to the platform word, clamped instead of trapping.
    @inline(__always) public init(clamping64 x: Int64) {
        let maxWord = Int64(widening: Int.max), minWord = Int64(widening: Int.min)
        self = x > maxWord ? .max : x < minWord ? .min : Int(truncatingIfNeeded: x)
    }
}
