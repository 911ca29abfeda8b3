/// A byte buffer of fixed capacity `N`, stored inline (no heap).
///
/// Appending past capacity does not trap: it sets `overflowed` and drops the byte, so an encoder can
/// write a whole PDU and the caller checks once (a radio peer must never be able to crash the host).
public struct FixedBytes<let N: Int>: ByteSink {
    public var storage: InlineArray<N, UInt8>
    public private(set) var overflowed = false
    /// The octets held, at most N (so N is at most 65,535: `init` checks, which costs nothing once N
    /// is known). 16 bits after the flag, so the buffer's size is its stride and at least a word
    /// smaller than with an `Int` count after the storage (N rounded up to 2, plus 4, where it was N
    /// rounded up to 4, plus 8): Swift 6.3 addresses a value whose size is not its stride as 1-aligned
    /// in places (an `InlineArray` element; slices of a value built in its place), and the Cortex-M0
    /// (no unaligned access) then moves each field an octet at a time.
    var used: UInt16 = 0
    public var count: Int { Int(used) }

    public init() {
        precondition(N <= Int(UInt16.max), "FixedBytes: more than 65,535 octets")
        storage = InlineArray(repeating: 0)
    }

    /// A copy of `bytes`; `overflowed` is set if they do not fit.
    public init(_ bytes: Span<UInt8>) {
        self.init()
        append(contentsOf: bytes)
    }

    public static var capacity: Int { N }
    public var capacity: Int { N }
    public var isEmpty: Bool { count == 0 }
    public var freeCapacity: Int { N &- count }

    /// Out of line, like `append(u16:)`: a call per octet measured smaller in firmware images than
    /// the check, store and increment written out at every encoder's every field.
    @inline(never)
    public mutating func append(_ byte: UInt8) {
        guard count < N else { overflowed = true; return }
        storage[unchecked: count] = byte
        used &+= 1  // below N, so it cannot overflow
    }

    /// Both octets with one check when they fit (the common case); octet by octet otherwise, so an
    /// overflow keeps what fitted, as `append(_:)` does.
    @inline(never)
    public mutating func append(u16 v: UInt16) {
        guard count < N &- 1 else {
            // Room for the low octet at most.
            if count < N { storage[unchecked: count] = UInt8(truncatingIfNeeded: v); used &+= 1 }
            overflowed = true
            return
        }
        storage[unchecked: count] = UInt8(truncatingIfNeeded: v)
        storage[unchecked: count &+ 1] = UInt8(truncatingIfNeeded: v &>> 8)
        used &+= 2
    }

    /// Appends as much of `bytes` as fits, in one pass the optimiser turns into a block copy (checked
    /// once, not per byte); sets `overflowed` if some did not fit, like `append(_:)`.
    public mutating func append(contentsOf bytes: Span<UInt8>) {
        let n = min(bytes.count, N &- count)
        if n < bytes.count { overflowed = true }
        guard n > 0 else { return }
        let start = count
        var target = storage.mutableSpan
        // start + i < start + n <= N and i < n <= bytes.count: in bounds by the line above, which
        // the optimiser did not carry through the 16-bit count (a check and a trap at each of the
        // firmware's inlined appends).
        for i in 0..<n { target[unchecked: start &+ i] = bytes[unchecked: i] }
        used &+= UInt16(truncatingIfNeeded: n)  // at most N
    }

    public subscript(i: Int) -> UInt8 {
        get { precondition(i >= 0 && i < count, "FixedBytes index out of range"); return storage[i] }
        set { precondition(i >= 0 && i < count, "FixedBytes index out of range"); storage[i] = newValue }
    }

    public mutating func removeAll() { used = 0; overflowed = false }

    /// Drops the first `n` bytes, moving the rest down (used by stream framers; n is small).
    public mutating func removeFirst(_ n: Int) {
        let n = min(max(n, 0), count)
        guard n > 0 else { return }
        // i + n < count <= N throughout: the indices need no checks of their own.
        for i in 0..<(count &- n) { storage[unchecked: i] = storage[unchecked: i &+ n] }
        used &-= UInt16(truncatingIfNeeded: n)
    }

    /// Keeps the first `length` bytes (no-op if it holds fewer). Bytes an overflow dropped came after
    /// the last one held, so the first `length` are all there: `overflowed` is cleared.
    public mutating func truncate(to length: Int) {
        guard length <= count else { return }
        used = UInt16(truncatingIfNeeded: max(0, length))
        overflowed = false
    }

    public var span: Span<UInt8> {
        // Addressable: the span must point into the caller's value, not into a copy the compiler
        // may make for a borrowed loadable `self` and free before the span is used (seen with
        // Swift 6.3 -Osize for armv7em: H4 packets went out as zeros).
        @_addressableSelf
        @_lifetime(borrow self)
        // 0 <= count <= N always holds, so the range needs no check.
        borrowing get { storage.span.extracting(unchecked: 0..<count) }
    }

    public func elementsEqual(_ other: Span<UInt8>) -> Bool {
        guard other.count == count else { return false }
        for i in 0..<count where storage[i] != other[i] { return false }
        return true
    }
}

extension FixedBytes: Equatable {
    public static func == (lhs: FixedBytes, rhs: FixedBytes) -> Bool { lhs.elementsEqual(rhs.span) }
}
