import BluetoothHost

/// A SHA-256 digest: seeds, matching keys and contact keys are all 32 bytes.
public typealias Digest32 = InlineArray<32, UInt8>
/// The 16 bytes a Simple payload carries (the first half of a contact key).
public typealias ContactIdentifier = InlineArray<16, UInt8>

/// The Simple payload's key schedule (Herald Simple payload specification, "Key derivation"; the
/// same chain as the reference apps' `K`).
///
/// - the day-2000 matching key seed is SHA-256(secret key); each earlier seed is
///   SHA-256(first 16 bytes of the next one) — a reverse chain with truncation, so a leaked seed
///   reveals only *earlier* days;
/// - matching key(d) = SHA-256(seed(d) XOR seed(d-1)); seed(-1) follows the same rule, so a key
///   needs only its own seed;
/// - per day, 241 contact key seeds (periods 0...240) by the same chain from SHA-256(matching key),
///   contact key(p) = SHA-256(seed(p) XOR seed(p-1)), contact identifier = its first 16 bytes.
public enum SimpleKeySchedule {
    /// Days 0...2000 have keys; day 2000 is the horizon of one secret key.
    public static let days = 2000
    /// Periods 0...240 have keys; a day's 86400 s only reach period 239 (240 × 360 s).
    public static let periods = 240
    public static let secretKeySize = 2048

    /// SHA-256 of the first 16 bytes (the truncation step of the chain).
    @inline(__always)
    public static func hashOfTruncation(_ seed: borrowing Digest32) -> Digest32 {
        SHA256.hash(seed.span.extracting(0..<16))
    }

    /// SHA-256(seed XOR previous seed): the key a seed stands for.
    @inline(__always)
    public static func key(fromSeed seed: borrowing Digest32) -> Digest32 {
        let previous = hashOfTruncation(seed)
        var mixed = Digest32(repeating: 0)
        for i in 0..<32 { mixed[i] = seed[i] ^ previous[i] }
        return SHA256.hash(mixed.span)
    }

    /// The day-2000 seed, SHA-256 of the whole secret key.
    public static func lastMatchingKeySeed(secretKey: Span<UInt8>) -> Digest32 { SHA256.hash(secretKey) }

    /// Day `day`'s matching key seed by walking the chain down from day 2000 (2000 - day hashes): what
    /// the MCU does once a day instead of keeping the whole chain. Nil outside 0...2000.
    public static func matchingKeySeed(secretKey: Span<UInt8>, day: Int) -> Digest32? {
        guard day >= 0, day <= days else { return nil }
        var seed = lastMatchingKeySeed(secretKey: secretKey)
        var d = days
        while d > day { seed = hashOfTruncation(seed); d -= 1 }
        return seed
    }

    public static func matchingKey(secretKey: Span<UInt8>, day: Int) -> Digest32? {
        guard let seed = matchingKeySeed(secretKey: secretKey, day: day) else { return nil }
        return key(fromSeed: seed)
    }

    /// Period `period`'s contact key seed, walking down from period 240. Nil outside 0...240.
    public static func contactKeySeed(matchingKey: borrowing Digest32, period: Int) -> Digest32? {
        guard period >= 0, period <= periods else { return nil }
        var seed = SHA256.hash(matchingKey.span)
        var p = periods
        while p > period { seed = hashOfTruncation(seed); p -= 1 }
        return seed
    }

    public static func contactKey(matchingKey: borrowing Digest32, period: Int) -> Digest32? {
        guard let seed = contactKeySeed(matchingKey: matchingKey, period: period) else { return nil }
        return key(fromSeed: seed)
    }

    public static func contactIdentifier(contactKey: borrowing Digest32) -> ContactIdentifier {
        var id = ContactIdentifier(repeating: 0)
        for i in 0..<16 { id[i] = contactKey[i] }
        return id
    }

    public static func contactIdentifier(matchingKey: borrowing Digest32, period: Int) -> ContactIdentifier? {
        guard let key = contactKey(matchingKey: matchingKey, period: period) else { return nil }
        return contactIdentifier(contactKey: key)
    }

    /// Calls `body(period, identifier)` for periods 240 down to 0: one walk of the chain, two hashes
    /// per period (seed(p-1) is both the next step and the XOR partner). What matching uses.
    public static func forEachContactIdentifier(matchingKey: borrowing Digest32,
                                                _ body: (Int, ContactIdentifier) -> Void) {
        var seed = SHA256.hash(matchingKey.span)
        var p = periods
        while p >= 0 {
            let previous = hashOfTruncation(seed)
            var mixed = Digest32(repeating: 0)
            for i in 0..<32 { mixed[i] = seed[i] ^ previous[i] }
            let key = SHA256.hash(mixed.span)
            body(p, contactIdentifier(contactKey: key))
            seed = previous
            p -= 1
        }
    }
}

/// Matching key seeds for `N` consecutive days starting at `firstDay`, derived in one walk of the
/// chain and kept as 16-byte truncations (`N` = 2001 from day 0 holds the whole schedule in 32 KB —
/// fine on the host; an MCU picks a small `N` or walks per day with `SimpleKeySchedule`).
///
/// Stored: t(seed(d + 1)) for each cached day d, because seed(d) = SHA-256(t(seed(d + 1))); day 2000
/// has no successor, so its full seed is kept apart.
public struct MatchingKeySeedCache<let N: Int> {
    public let firstDay: Int
    var nextTruncated: InlineArray<N, InlineArray<16, UInt8>>
    var lastSeed: Digest32

    /// Days past 2000 are simply not cached (`seed(day:)` returns nil for them).
    public init(secretKey: Span<UInt8>, firstDay: Int = 0) {
        self.firstDay = max(0, firstDay)
        nextTruncated = InlineArray(repeating: InlineArray(repeating: 0))
        lastSeed = SimpleKeySchedule.lastMatchingKeySeed(secretKey: secretKey)
        var seed = lastSeed
        var d = SimpleKeySchedule.days
        // Walk down; when seed(d) is known, store its truncation as day (d - 1)'s successor.
        while d > self.firstDay {
            let slot = d - 1 - self.firstDay
            if slot < N {
                var t = InlineArray<16, UInt8>(repeating: 0)
                for i in 0..<16 { t[i] = seed[i] }
                nextTruncated[slot] = t
            }
            seed = SimpleKeySchedule.hashOfTruncation(seed)
            d -= 1
        }
    }

    public var lastDay: Int { min(firstDay + N - 1, SimpleKeySchedule.days) }

    public func seed(day: Int) -> Digest32? {
        guard day >= firstDay, day <= lastDay else { return nil }
        if day == SimpleKeySchedule.days { return lastSeed }
        return SHA256.hash(nextTruncated[day - firstDay].span)
    }

    public func matchingKey(day: Int) -> Digest32? {
        guard let s = seed(day: day) else { return nil }
        return SimpleKeySchedule.key(fromSeed: s)
    }
}
