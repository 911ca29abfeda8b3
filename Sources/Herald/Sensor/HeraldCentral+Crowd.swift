import BluetoothHost

/// What the central does so that several centrals around one advertiser do not all connect at once.
///
/// Every scanner in range hears an advert at the same instant, and a Herald central connects to a
/// device it needs as soon as it hears it. So in a crowd, several centrals start LE Create Connection
/// to the same advertiser within milliseconds and all send their CONNECT_IND after its next
/// ADV_IND. The advertiser takes at most one (Core 5.4 Vol 6 Part B 4.4.4); each other central
/// believes its link is up and loses it 0x3E after six connection events (Vol 6 Part B 4.5.2). All
/// the losers then heard the *same* next advert, retried together and collided again: a pair needed
/// 12 attempts, and another over a minute once five failures in a row started the 1 min back-off
/// (`bench-wearables`, six wearables, issue 39).
///
/// The cure is the one every shared medium uses (Ethernet's and the LL's own advertising delay,
/// Core 5.4 Vol 6 Part B 4.4.2.2.1): each central draws its own delay.
/// - **A device first heard** is connected to only after a random delay of up to
///   `firstAttemptSpread` (two advertising intervals of a Herald device by default), so the centrals
///   that heard the same advert answer different ones; meanwhile the scheduler serves other devices.
/// - **After a failed attempt or read**, the retry waits a random delay of up to `retrySpread` ×
///   2^(failures in a row − 1), at most `retrySpreadLimit`, as well as for an advert heard after the
///   failure: the centrals that lost to the same winner spread over more adverts each time.
/// - **Links that failed to be established** (0x3E) start the back-off round only at
///   `maximumFailuresToEstablish` in a row, not `maximumFailures`. The device was advertising a
///   moment before; in a crowd such failures come in runs (another central's CONNECT_IND taken, a
///   controller busy with its other links), and five of them lost to the beacon in 4 s once cost a
///   wearable a one-minute round and a 64.6 s first read. A device gone shows as connection
///   timeouts instead, which still count toward `maximumFailures`. Their retry is drawn from the
///   first window, `retrySpread`, however many came before: the central whose CONNECT_IND the
///   advertiser took has its link and has left the contest, so the losers need not spread wider,
///   and doubling cost a wearable 2.8 s between its fourth and fifth attempt on the beacon.
///
/// The draws come from a xorshift generator (`CentralDraws`) that each device seeds with its own
/// advertised address (random per device: a resolvable private or static address) and that the
/// application may stir with more entropy; nothing needs to be unpredictable, only different from
/// one device to the next. Sans-I/O: no clock or random source is read here.
extension HeraldCentral {
    /// A delay in [0, `window`] ms drawn for this device.
    mutating func spread(_ window: UInt64) -> UInt64 {
        window == 0 ? 0 : draws.next(below: window &+ 1)
    }

    /// The window a retry after `failures` consecutive failures is drawn from (ms).
    /// `mutating` although it changes nothing, like the central's lookups (`HeraldCentral+Connections`).
    mutating func retryWindow(failures: Int) -> UInt64 {
        let base = configuration.retrySpread, limit = configuration.retrySpreadLimit
        guard failures > 1 else { return min(base, limit) }
        // Widened by hand: `UInt64(_:)` of an Int allocates on a 32-bit target (Bytes/Widening.swift).
        let shift = UInt64(widening: UInt(bitPattern: min(failures - 1, 16)))
        return min(base &<< shift, limit)
    }

    /// Holds device `index` until `now + delay` (a longer hold already there, such as a back-off
    /// round, stays).
    mutating func hold(device index: Int, for delay: UInt64, now: UInt64) {
        guard delay > 0 else { return }
        let until = now &+ delay
        if let current = database.entries[index]?.ignoreUntil, current >= until { return }
        database.entries[index]?.ignoreUntil = until
    }

    /// Mixes more entropy into the central's draws (the application's random source, a controller's
    /// LE Rand): two devices seeded alike would otherwise draw alike until their addresses differ.
    public mutating func stir(_ entropy: UInt64) {
        draws.mix(entropy)
    }
}

/// The central's random draws: xorshift32 (Marsaglia, "Xorshift RNGs", 2003), four octets of state,
/// seeded from the device's own advertised address (`stir`). Not for anything secret.
public struct CentralDraws: Sendable {
    var state: UInt32 = 0x6D2B_79F5

    public init() {}

    /// Folds `value` into the state (never leaving it zero, the generator's one fixed point).
    public mutating func mix(_ value: UInt64) {
        state ^= UInt32(truncatingIfNeeded: value) &* 0x9E37_79B9
        state ^= UInt32(truncatingIfNeeded: value &>> (32 as UInt64)) &* 0x85EB_CA6B
        if state == 0 { state = 0x6D2B_79F5 }
        _ = next()
    }

    public mutating func next() -> UInt32 {
        state ^= state &<< 13
        state ^= state &>> 17
        state ^= state &<< 5
        return state
    }

    /// A draw in 0..<bound (bound > 0; the modulo bias is immaterial for delays of ms).
    public mutating func next(below bound: UInt64) -> UInt64 {
        UInt64(widening: next()) % bound
    }
}

extension BDAddress {
    /// The six octets as one number, for seeding.
    var seedValue: UInt64 {
        var v: UInt64 = 0
        for i in 0..<6 { v = v &<< (8 as UInt64) | UInt64(widening: bytes[i]) }
        return v
    }
}
