import BluetoothHost

/// Where the peripheral's payload characteristic value comes from. Generic, never existential: the
/// peripheral is specialised for its source.
public protocol HeraldPayloadSource {
    /// Writes the payload for `time` (seconds since 1970, UTC). Returns false, having written nothing,
    /// when there is no payload for that time (e.g. outside the key schedule).
    mutating func writePayload<S: ByteSink>(at time: Int64, to sink: inout S) -> Bool
    /// Whether the payload depends on `time` (true unless said otherwise). A source that does not
    /// change spares a peripheral that also keeps its address the period grid altogether: no timer
    /// at each period boundary, and no period arithmetic in its image.
    static var changesWithTime: Bool { get }
    /// The payload, when it is the same octets for the image's whole life and stays where it is
    /// (flash): a read is then served from them as they lie, with no copy kept per link, and the
    /// peripheral's `payloadCapacity` may be 0. The delegate is not asked
    /// (`HeraldPeripheralDelegate.heraldPeripheral(payloadAt:into:)`): an application whose delegate
    /// supplies the payload has `NoPayloadSource`, as the sensor does. nil unless said otherwise:
    /// `writePayload(at:to:)` fills each link's copy on its first read.
    static var constantBytes: UnsafeBufferPointer<UInt8>? { get }
}

extension HeraldPayloadSource {
    public static var changesWithTime: Bool { true }
    public static var constantBytes: UnsafeBufferPointer<UInt8>? { nil }
}

/// A peripheral without a payload source of its own: its delegate supplies the payload
/// (`HeraldPeripheralDelegate.heraldPeripheral(payloadAt:into:)`). A sensor's peripheral is one: the
/// sensor's `PayloadDataSupplier` is the one provider of our payload. Serves nothing otherwise.
public struct NoPayloadSource: HeraldPayloadSource {
    public init() {}
    public mutating func writePayload<S: ByteSink>(at time: Int64, to sink: inout S) -> Bool { false }
}

/// A payload that does not change with time: a venue beacon's, or a fixed test payload. At most `N`
/// bytes (a Simple or beacon payload is at most 510).
public struct FixedPayloadSource<let N: Int>: HeraldPayloadSource {
    public private(set) var payload: FixedBytes<N>

    public static var changesWithTime: Bool { false }

    /// Any bytes; `badLength` if they do not fit in `N`.
    public init(bytes: Span<UInt8>) throws(DecodeError) {
        guard bytes.count <= N else { throw .badLength(field: "payload", declared: bytes.count, limit: N) }
        payload = FixedBytes<N>(bytes)
    }

    /// A venue beacon payload (Herald beacon payload specification): protocol 0x30, country, state,
    /// location code, then `extendedData` (already encoded sections, checked here).
    public static func venueBeacon(header: PayloadHeader, locationCode: UInt32, extendedData: Span<UInt8> = Span(),
                                   order: PayloadCodeByteOrder = .bigEndian) throws(DecodeError) -> FixedPayloadSource<N> {
        var bytes = FixedBytes<N>()
        try VenueBeaconPayload.write(header: header, locationCode: locationCode, extendedData: extendedData,
                                     order: order, to: &bytes)
        guard !bytes.overflowed else {
            throw .badLength(field: "beacon payload", declared: VenueBeaconPayload.minimumSize + extendedData.count, limit: N)
        }
        return try FixedPayloadSource<N>(bytes: bytes.span)
    }

    /// A Simple payload with a fixed contact identifier: for tests and interoperability rigs that need
    /// a payload they can predict. It never rotates, so it must not be used for real contact tracing.
    public static func simpleTest(header: PayloadHeader, contactIdentifier: ContactIdentifier,
                                  order: PayloadCodeByteOrder = .bigEndian) throws(DecodeError) -> FixedPayloadSource<N> {
        var bytes = FixedBytes<N>()
        try SimplePayload.write(header: header, contactIdentifier: contactIdentifier, extendedData: Span(),
                                order: order, to: &bytes)
        guard !bytes.overflowed else { throw .badLength(field: "payload", declared: SimplePayload.minimumSize, limit: N) }
        return try FixedPayloadSource<N>(bytes: bytes.span)
    }

    public mutating func writePayload<S: ByteSink>(at time: Int64, to sink: inout S) -> Bool {
        sink.append(contentsOf: payload.span)
        return true
    }
}
