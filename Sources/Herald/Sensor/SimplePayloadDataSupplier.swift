import BluetoothHost

/// Our Simple payload for the current period, from the device's 2048-byte secret key: the one
/// provider of a wearable's payload, for the sensor and for the peripheral half that serves it.
///
/// Asked by UTC second (`writePayload(at:to:)`): the owner's clock (runtime or firmware, which can
/// read one) is the peripheral's `HeraldClock`, the only mapping from stack time to UTC. A time
/// outside the key schedule writes nothing: identifiers from a guessed date would be ones nobody can
/// match. The key stays where `Key` keeps it (`InlineSecretKey` in RAM, `StaticSecretKey` in flash);
/// `SimplePayloadSupplier` walks the key chain once per day and once per period, so successive reads
/// in a period cost nothing.
public struct SimplePayloadDataSupplier<Key: SecretKeyStore>: PayloadDataSupplier {
    public var supplier: SimplePayloadSupplier
    /// Encoded extended-data sections appended to each payload (none unless set).
    public var extendedData = FixedBytes<32>()
    var secretKey: Key

    public init(key: Key, header: PayloadHeader, epoch: KeyEpoch = .standard, order: PayloadCodeByteOrder = .bigEndian) {
        supplier = SimplePayloadSupplier(header: header, epoch: epoch, order: order)
        secretKey = key
    }

    public mutating func writePayload<S: ByteSink>(at time: Int64, to sink: inout S) -> Bool {
        var supplier = self.supplier
        let extended = extendedData
        let written = secretKey.withSecretKey { key in
            do throws(DecodeError) {
                return try supplier.writePayload(at: time, secretKey: key, extendedData: extended.span, to: &sink)
            } catch {
                // Only invalid extended data can fail.
                return false
            }
        }
        self.supplier = supplier
        return written
    }

    public func firstPayloadLength(in list: Span<UInt8>) -> Int? { SimplePayloadLayout().firstPayloadLength(in: list) }
}

extension SimplePayloadDataSupplier where Key == InlineSecretKey {
    /// A copy of `secretKey`, which must be exactly `SimpleKeySchedule.secretKeySize` (2048) bytes.
    public init(secretKey: Span<UInt8>, header: PayloadHeader, epoch: KeyEpoch = .standard,
                order: PayloadCodeByteOrder = .bigEndian) throws(DecodeError) {
        guard let key = InlineSecretKey(secretKey) else {
            throw .badLength(field: "secret key", declared: secretKey.count, limit: SimpleKeySchedule.secretKeySize)
        }
        self.init(key: key, header: header, epoch: epoch, order: order)
    }
}

/// Splits lists of Simple payloads: shared payloads carry no extended data, so each is the 21-byte
/// header + contact identifier (`SimplePayload.minimumSize`, the unit of payload sharing).
public struct SimplePayloadLayout: PayloadDataSupplier {
    public init() {}
    public static var changesWithTime: Bool { false }
    /// Supplies nothing: a layout only splits lists (for tests and receive-only tools).
    public mutating func writePayload<S: ByteSink>(at time: Int64, to sink: inout S) -> Bool { false }
    public func firstPayloadLength(in list: Span<UInt8>) -> Int? {
        list.count >= SimplePayload.minimumSize && SimplePayload.protocolRange.contains(list[0]) ? SimplePayload.minimumSize : nil
    }
}

/// A fixed payload (a test payload, `--payload test`) as the sensor's supplier: Simple lists split.
extension FixedPayloadSource: PayloadDataSupplier {
    public func firstPayloadLength(in list: Span<UInt8>) -> Int? { SimplePayloadLayout().firstPayloadLength(in: list) }
}
