import BluetoothHost

/// What the signal characteristic a device exposes says about its platform (Herald protocol
/// specification: iOS apps expose the non-compliant write-and-notify characteristic 0eb0d5f2-…,
/// everything else the compliant write-only f617b813-…).
public enum HeraldDeviceOS: Sendable, Equatable {
    case unknown
    case android
    case ios
}

/// Why a device was first put in the database.
public enum HeraldDeviceKind: Sendable, Equatable {
    /// Advertises a Herald service UUID or pseudo device address.
    case herald
    /// An Apple device that may hide the Herald service; only GATT discovery can tell.
    case appleToCheck
    /// A device that wrote its payload to our signal characteristic without being seen advertising.
    case receiveOnly
}

/// One logical peer, however often its Bluetooth address rotates.
///
/// Field order is deliberate: Swift lays fields out in declaration order, and an optional 64-bit time
/// takes 9 octets, so each is followed by the one-octet fields that fill its padding. A firmware
/// database holds 16–32 of these; this order saves 31 octets each on a 32-bit MCU.
public struct HeraldDevice {
    /// Start of the contact event: the first advert (ms).
    public var firstSeen: UInt64
    /// End of the contact event so far: the last RSSI measured (ms). Connections never move it.
    public var lastSeen: UInt64
    /// Last change of any field: the least recently updated device is evicted first.
    public var lastUpdated: UInt64
    /// When the payload was read; nil while unknown.
    public var payloadTime: UInt64?
    public var kind: HeraldDeviceKind
    public var os: HeraldDeviceOS = .unknown
    /// The device exposes the Herald service (nil until GATT discovery or an advert says so).
    public var hasHeraldService: Bool?
    /// Immediate-send data waits for this device (the data is `HeraldCentral.immediateData`).
    public var immediateSendPending = false
    /// The last advert was connectable (scan responses do not change it).
    public var connectable = true
    public var rssi: Int8?
    /// No connection attempts before this time.
    public var ignoreUntil: UInt64?
    public var txPower: Int8?
    /// The device has answered one of our scan requests (`HeraldCentral+Scanning`). Here it fills the
    /// octet before `inboundLink`'s two-octet alignment.
    public var answeredScan = false
    /// The device is connected to us (we are its peripheral) on this link: no second link is made.
    public var inboundLink: UInt16?
    /// Rounds of `maximumFailures` consecutive failures since the last success (the back-off step).
    /// Here it fills padding before the next 64-bit field (on a 32-bit MCU; 8 octets per device elsewhere).
    public var failureRounds: UInt8 = 0
    /// The last failed connection; the device is tried again only once heard after it.
    public var lastFailure: UInt64?
    public var pseudoAddress: PseudoDeviceAddress?
    /// When our payload-sharing list last went to this device.
    public var lastShared: UInt64?
    /// The address last seen (the one to connect to).
    public var address: DeviceAddress
    public var target: TargetIdentifier
    public var consecutiveFailures = 0
    public var payload = PayloadBytes()
    /// The next ignore period (×1.2 each time, capped). Last, so the device's size is a multiple of
    /// its 8-octet alignment (176 octets on a 32-bit MCU, as before): an `InlineArray` element whose
    /// size is not its stride is addressed as if 1-aligned (Swift 6.3), each field an octet at a time
    /// on a Cortex-M0 (`Connection.phyRequestAt` says more).
    public var ignoreInterval: UInt64

    public var hasPayload: Bool { payloadTime != nil }

    /// The contact event: first detection to the last RSSI.
    public var contactEvent: (start: UInt64, end: UInt64) { (firstSeen, lastSeen) }

    /// The failure back-off ran out: the device is measured but never connected to again while it
    /// stays in the database (see `HeraldDeviceDatabase.backOff`).
    public var isGivenUp: Bool { ignoreUntil == .max }

    public func isIgnored(at now: UInt64) -> Bool {
        if let until = ignoreUntil { return now < until }
        return false
    }
}

/// The devices the sensor knows, in fixed capacity: when full, the least recently updated device
/// makes room. One entry per peer: adverts are matched by pseudo device address first (it survives
/// address rotation), then by Bluetooth address; a payload identical to another entry's merges the two.
public struct HeraldDeviceDatabase<let capacity: Int> {
    public internal(set) var entries: InlineArray<capacity, HeraldDevice?>
    /// Each position's target value, 0 where the position is empty. `index(of: TargetIdentifier)`,
    /// the sensor's most frequent lookup, scans these few octets: scanning `entries` from a read-only
    /// method made the compiler copy the whole table (16–32 devices of 240 octets) each time.
    var targets: InlineArray<capacity, UInt32>
    /// Never 0 (that marks an empty position in `targets`).
    var nextTarget: UInt32 = 1
    /// First ignore period (Herald: 60 s), its growth factor 6/5 and its ceiling (about 3 minutes).
    public var initialIgnoreInterval: UInt64 = 60_000
    public var maximumIgnoreInterval: UInt64 = 180_000

    public init() {
        entries = InlineArray(repeating: nil)
        targets = InlineArray(repeating: 0)
    }

    /// Puts `device` (or nothing) at `index`, keeping `targets` in step.
    mutating func store(_ device: HeraldDevice?, at index: Int) {
        targets[index] = device?.target.value ?? 0
        entries[index] = device
    }

    public var count: Int {
        var n = 0
        for i in 0..<capacity where entries[i] != nil { n += 1 }
        return n
    }

    public subscript(index: Int) -> HeraldDevice? {
        get { entries[index] }
        set { store(newValue, at: index) }
    }

    // The lookups below are `mutating` although they change nothing. Swift 6.3 passes a read-only
    // method a copy of a struct this large (16–32 devices of 240 octets) when the caller holds it
    // mutably, which the sensor always does: on a microcontroller each lookup put the whole table on
    // the stack. A mutating method works on the table in place.
    public mutating func index(of target: TargetIdentifier) -> Int? {
        guard target.value != 0 else { return nil }
        for i in 0..<capacity where targets[i] == target.value { return i }
        return nil
    }

    /// The target of the device at `index` (0 where the position is empty), read from `targets`
    /// rather than by copying the device out.
    /// Mutating only so that it reads in place (see below).
    public mutating func targetIdentifier(at index: Int) -> TargetIdentifier { TargetIdentifier(targets[index]) }

    /// Lends the payload of the device at `index` to `body` in place (nil where the position is empty).
    public mutating func withPayload<R>(at index: Int, _ body: (Span<UInt8>) -> R) -> R? {
        guard entries[index] != nil else { return nil }
        return body(entries[index]!.payload.span)
    }

    /// Whether the devices at `a` and `b` both hold the same payload, compared in place.
    public mutating func samePayload(_ a: Int, _ b: Int) -> Bool {
        guard entries[a]?.hasPayload == true, entries[b]?.hasPayload == true else { return false }
        return entries[a]!.payload.elementsEqual(entries[b]!.payload.span)
    }

    /// The payload-sharing "calling card" for the device at `peer`: whole payloads of Herald iOS and
    /// receive-only devices seen within `window` of `now`, never the peer's own, at most
    /// `maximumBytes` of them, appended to `list` (which may already hold the message header, so the
    /// central writes it straight into its outgoing message). Returns how many payloads it added.
    /// Mutating only so that it reads in place: each device is read field by field where it lies,
    /// not copied out; it changes nothing.
    public mutating func sharingList<let n: Int>(for peer: Int, now: UInt64, window: UInt64, into list: inout FixedBytes<n>,
                                                 maximumBytes: Int) -> Int {
        guard let peerHasPayload = entries[peer]?.hasPayload else { return 0 }
        let start = list.count
        var added = 0
        for i in 0..<capacity where i != peer {
            guard entries[i]?.hasPayload == true, entries[i]?.os == .ios || entries[i]?.kind == .receiveOnly,
                  let lastSeen = entries[i]?.lastSeen, now &- lastSeen <= window,
                  let length = entries[i]?.payload.count else { continue }
            if peerHasPayload && samePayload(peer, i) { continue }
            guard length <= list.freeCapacity, list.count - start + length <= maximumBytes else { continue }
            _ = withPayload(at: i) { list.append(contentsOf: $0) }
            added += 1
        }
        return added
    }

    public mutating func index(of address: DeviceAddress) -> Int? {
        for i in 0..<capacity where entries[i]?.address == address { return i }
        return nil
    }

    public mutating func index(ofPseudoAddress pseudo: PseudoDeviceAddress) -> Int? {
        for i in 0..<capacity where entries[i]?.pseudoAddress == pseudo { return i }
        return nil
    }

    public mutating func index(ofPayload payload: Span<UInt8>, except: Int? = nil) -> Int? {
        for i in 0..<capacity where i != except {
            if let d = entries[i], d.hasPayload, d.payload.elementsEqual(payload) { return i }
        }
        return nil
    }

    /// The device this advert belongs to, or a new entry for it. `evicted` receives the target of a
    /// device removed to make room. Returns the index and whether the device is new.
    public mutating func observe(address: DeviceAddress, pseudoAddress: PseudoDeviceAddress?, kind: HeraldDeviceKind,
                                 now: UInt64, evicted: (TargetIdentifier) -> Void) -> (index: Int, isNew: Bool) {
        if let pseudo = pseudoAddress, let i = index(ofPseudoAddress: pseudo) {
            // The same peer under a rotated address: follow it.
            if entries[i]?.address != address {
                if let stale = index(of: address), stale != i { evicted(targetIdentifier(at: stale)); store(nil, at: stale) }
                entries[i]?.address = address
                entries[i]?.answeredScan = false
            }
            entries[i]?.lastUpdated = now
            return (i, false)
        }
        if let i = index(of: address) {
            if let pseudo = pseudoAddress { entries[i]?.pseudoAddress = pseudo }
            // An advert upgrades what we knew: a receive-only writer now advertising can be
            // connected to; anything advertising the Herald service is Herald.
            if kind == .herald || entries[i]?.kind == .receiveOnly { entries[i]?.kind = kind }
            entries[i]?.lastUpdated = now
            return (i, false)
        }
        let slot = freeSlot(evicted: evicted)
        // Written into its position, not passed to `store`: a parameter is a copy of the device.
        targets[slot] = nextTarget
        entries[slot] = HeraldDevice(firstSeen: now, lastSeen: now, lastUpdated: now,
                                     kind: kind, hasHeraldService: kind == .herald ? true : nil,
                                     pseudoAddress: pseudoAddress, address: address, target: TargetIdentifier(nextTarget),
                                     ignoreInterval: initialIgnoreInterval)
        nextTarget &+= 1
        if nextTarget == 0 { nextTarget = 1 }
        return (slot, true)
    }

    /// A target identifier no device of this run has had, for something reported but not filed
    /// (a shared payload).
    public mutating func newTarget() -> TargetIdentifier {
        let t = TargetIdentifier(nextTarget)
        nextTarget &+= 1
        if nextTarget == 0 { nextTarget = 1 }
        return t
    }

    /// A free slot, evicting the least recently updated device when full.
    mutating func freeSlot(evicted: (TargetIdentifier) -> Void) -> Int {
        var oldest = 0
        var oldestUpdate = UInt64.max
        for i in 0..<capacity {
            guard let updated = entries[i]?.lastUpdated else { return i }
            if updated < oldestUpdate { oldest = i; oldestUpdate = updated }
        }
        evicted(targetIdentifier(at: oldest))
        store(nil, at: oldest)
        return oldest
    }

    /// Records a payload read from the device at `index`. When another entry already holds the same
    /// payload, that entry is the same person under an earlier address: it absorbs this one (address,
    /// RSSI, last seen) and this one is removed. Returns the surviving index and the removed target.
    /// An empty payload, or one longer than `HeraldSensorLimits.payloadCapacity`, is refused (nil).
    public mutating func setPayload(_ payload: Span<UInt8>, at index: Int, now: UInt64) -> (index: Int, merged: TargetIdentifier?)? {
        guard payload.count > 0, payload.count <= PayloadBytes.capacity, entries[index] != nil else { return nil }
        if let other = self.index(ofPayload: payload, except: index) {
            let gone = targetIdentifier(at: index)
            absorb(index, into: other, now: now)
            store(nil, at: index)
            return (other, gone)
        }
        // In place: a `PayloadBytes` temporary is another 512 octets (128 on a microcontroller) of stack.
        entries[index]?.payload.removeAll()
        entries[index]?.payload.append(contentsOf: payload)
        entries[index]?.payloadTime = now
        entries[index]?.lastUpdated = now
        return (index, nil)
    }

    /// Device `k` (holding the payload device `g` just read) is the same person under an earlier
    /// address: it takes `g`'s address, its measurement when newer, and what `g` learnt. Field by
    /// field in place: copying both devices out put 480 octets on a microcontroller's stack.
    mutating func absorb(_ g: Int, into k: Int, now: UInt64) {
        guard let address = entries[g]?.address, let goneFirst = entries[g]?.firstSeen, let goneLast = entries[g]?.lastSeen,
              let keepFirst = entries[k]?.firstSeen, let keepLast = entries[k]?.lastSeen else { return }
        entries[k]?.address = address
        if goneLast >= keepLast {
            let rssi = entries[g]?.rssi
            let txPower = entries[g]?.txPower
            entries[k]?.lastSeen = goneLast
            entries[k]?.rssi = rssi
            if let txPower { entries[k]?.txPower = txPower }
        }
        entries[k]?.firstSeen = min(keepFirst, goneFirst)
        if let pseudo = entries[g]?.pseudoAddress { entries[k]?.pseudoAddress = pseudo }
        if let os = entries[g]?.os, os != .unknown { entries[k]?.os = os }
        if let service = entries[g]?.hasHeraldService { entries[k]?.hasHeraldService = service }
        if entries[g]?.immediateSendPending == true { entries[k]?.immediateSendPending = true }
        entries[k]?.payloadTime = now
        entries[k]?.lastUpdated = now
    }

    /// Ignores the device for its current ignore interval, then grows the interval ×1.2 up to the
    /// ceiling (60, 72, 86.4, 103.7 … 180 s). Returns the period applied.
    @discardableResult
    public mutating func ignore(at index: Int, now: UInt64) -> UInt64 {
        guard let period = entries[index]?.ignoreInterval else { return 0 }
        entries[index]?.ignoreUntil = now &+ period
        entries[index]?.ignoreInterval = min(period * 6 / 5, maximumIgnoreInterval)
        entries[index]?.consecutiveFailures = 0
        entries[index]?.lastUpdated = now
        return period
    }

    /// The failure back-off: after each round of consecutive failed connections or reads (five by
    /// default) a device is left alone for 1, 2, 4, 8, 16 then 32 minutes; a seventh failed round
    /// (35 attempts over about 63 minutes) gives it up for as long as it stays in the database (it
    /// leaves after `outOfRange` unheard, an hour). A success starts the schedule again.
    ///
    /// Why not the reference apps' ignore (60 s growing ×1.2 to about 3 minutes, for ever): a device
    /// whose payload can never be read (too long, broken server) would be reconnected every few
    /// minutes all day, the repeated-connection pattern the Herald lifecycle document warns makes
    /// Android's Bluetooth unstable. Apple devices without the service keep that ignore (`ignore`).
    public static var backOffSchedule: InlineArray<6, UInt64> {
        [60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000]
    }

    /// Applies the next back-off round to the device at `index`; returns the period, nil when the
    /// schedule has run out and the device is given up.
    @discardableResult
    public mutating func backOff(at index: Int, now: UInt64) -> UInt64? {
        guard let rounds = entries[index]?.failureRounds else { return nil }
        let round = Int(rounds)
        entries[index]?.consecutiveFailures = 0
        entries[index]?.lastUpdated = now
        let schedule = Self.backOffSchedule
        guard round < schedule.count else {
            entries[index]?.ignoreUntil = .max
            return nil
        }
        entries[index]?.failureRounds = UInt8(truncatingIfNeeded: round + 1)
        entries[index]?.ignoreUntil = now &+ schedule[round]
        return schedule[round]
    }

    /// Removes devices not seen for `outOfRange` ms, reporting each target.
    public mutating func purge(now: UInt64, outOfRange: UInt64, removed: (TargetIdentifier) -> Void) {
        for i in 0..<capacity {
            guard let d = entries[i], now >= d.lastSeen, now - d.lastSeen >= outOfRange else { continue }
            removed(d.target)
            store(nil, at: i)
        }
    }
}
