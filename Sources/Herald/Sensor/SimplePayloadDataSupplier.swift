import BluetoothHost

/// Our Simple payload as a `PayloadDataSupplier`: the key schedule walked for the sensor's clock.
///
/// The sensor's clock is milliseconds since an arbitrary start; the key schedule needs UTC. The owner
/// (runtime or firmware, which can read a clock) sets `unixSecondsAtZero`, the UTC second at which the
/// sensor's clock read 0. Until it is set (nil) there is no payload: identifiers from a guessed date
/// would be ones nobody can match.
public struct SimplePayloadDataSupplier<Key: SecretKeyStore>: PayloadDataSupplier {
    public var supplier: SimplePayloadSupplier
    public var unixSecondsAtZero: Int64?
    public var extendedData = FixedBytes<32>()
    var secretKey: Key

    public init(key: Key, header: PayloadHeader, epoch: KeyEpoch = .standard,
                order: PayloadCodeByteOrder = .bigEndian, unixSecondsAtZero: Int64? = nil) {
        supplier = SimplePayloadSupplier(header: header, epoch: epoch, order: order)
        self.unixSecondsAtZero = unixSecondsAtZero
        secretKey = key
    }

    /// UTC seconds at sensor time `now` (ms), if the clock is set.
    public func unixSeconds(at now: UInt64) -> Int64? {
        unixSecondsAtZero.map { $0 &+ Int64(bitPattern: now / 1_000) }
    }

    public mutating func payload<S: ByteSink>(at now: UInt64, for peer: TargetIdentifier?, into sink: inout S) -> Bool {
        guard let t = unixSeconds(at: now) else { return false }
        return writePayload(at: t, to: &sink)
    }

    public func firstPayloadLength(in list: Span<UInt8>) -> Int? { SimplePayloadLayout().firstPayloadLength(in: list) }
}

extension SimplePayloadDataSupplier where Key == InlineSecretKey {
    /// A copy of `secretKey`, which must be `SimpleKeySchedule.secretKeySize` (2048) bytes; nil otherwise.
    public init?(header: PayloadHeader, secretKey: Span<UInt8>, epoch: KeyEpoch = .standard,
                 order: PayloadCodeByteOrder = .bigEndian, unixSecondsAtZero: Int64? = nil) {
        guard let key = InlineSecretKey(secretKey) else { return nil }
        self.init(key: key, header: header, epoch: epoch, order: order, unixSecondsAtZero: unixSecondsAtZero)
    }
}

/// The same supplier can serve the peripheral's payload characteristic, which asks by UTC second.
extension SimplePayloadDataSupplier: HeraldPayloadSource {
    public mutating func writePayload<S: ByteSink>(at time: Int64, to sink: inout S) -> Bool {
        var supplier = self.supplier
        let extended = extendedData
        let written = secretKey.withSecretKey { key in
            do throws(DecodeError) {
                return try supplier.writePayload(at: time, secretKey: key, extendedData: extended.span, to: &sink)
            } catch {
                return false
            }
        }
        self.supplier = supplier
        return written
    }
}

/// Splits lists of Simple payloads: shared payloads carry no extended data, so each is the 21-byte
/// header + contact identifier (`SimplePayload.minimumSize`, the unit of payload sharing).
public struct SimplePayloadLayout: PayloadDataSupplier {
    public init() {}
    /// Supplies nothing: a layout only splits lists (for tests and receive-only tools).
    public mutating func payload<S: ByteSink>(at now: UInt64, for peer: TargetIdentifier?, into sink: inout S) -> Bool { false }
    public func firstPayloadLength(in list: Span<UInt8>) -> Int? {
        list.count >= SimplePayload.minimumSize && SimplePayload.protocolRange.contains(list[0]) ? SimplePayload.minimumSize : nil
    }
}
