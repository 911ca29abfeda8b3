import BluetoothHost

/// Produces our Simple payload for a given time, sans-I/O: the caller passes the time and the
/// secret key; the supplier walks the key chain once per day (≤ 2000 hashes) and once per period
/// (≤ 240 hashes), and keeps only the day's matching key and the period's identifier — what an MCU
/// can afford instead of the 32 KB seed cache.
///
/// Outside the key schedule (before the epoch, past day 2000) it produces nothing rather than a
/// payload of zeros, so a device never advertises an identifier shared with every other expired one.
public struct SimplePayloadSupplier {
    public var header: PayloadHeader
    public var order: PayloadCodeByteOrder
    public let epoch: KeyEpoch

    var day = -1
    var period = -1
    var matchingKey = Digest32(repeating: 0)
    var identifier = ContactIdentifier(repeating: 0)

    public init(header: PayloadHeader, epoch: KeyEpoch = .standard, order: PayloadCodeByteOrder = .bigEndian) {
        self.header = header
        self.epoch = epoch
        self.order = order
    }

    /// The period the last identifier belongs to, (-1, -1) before the first call.
    public var currentDay: Int { day }
    public var currentPeriod: Int { period }

    /// True when `time` is in a different period than the identifier last produced: the moment to
    /// change both the payload and the resolvable private address.
    public func rotationDue(at time: Int64) -> Bool {
        guard let d = epoch.day(at: time), let p = epoch.period(at: time) else { return false }
        return d != day || p != period
    }

    /// The contact identifier for `time`; nil outside the key schedule.
    public mutating func contactIdentifier(at time: Int64, secretKey: Span<UInt8>) -> ContactIdentifier? {
        guard epoch.horizon(at: time).isUsable, let d = epoch.day(at: time), let p = epoch.period(at: time) else { return nil }
        if d != day {
            guard let mk = SimpleKeySchedule.matchingKey(secretKey: secretKey, day: d) else { return nil }
            matchingKey = mk
            day = d
            period = -1
        }
        if p != period {
            guard let id = SimpleKeySchedule.contactIdentifier(matchingKey: matchingKey, period: p) else { return nil }
            identifier = id
            period = p
        }
        return identifier
    }

    /// Writes the payload for `time`; returns false (writing nothing) outside the key schedule.
    public mutating func writePayload<S: ByteSink>(at time: Int64, secretKey: Span<UInt8>, extendedData: Span<UInt8> = Span(),
                                                   to sink: inout S) throws(DecodeError) -> Bool {
        guard let id = contactIdentifier(at: time, secretKey: secretKey) else { return false }
        try SimplePayload.write(header: header, contactIdentifier: id, extendedData: extendedData, order: order, to: &sink)
        return true
    }
}
