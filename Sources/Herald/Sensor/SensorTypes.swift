import BluetoothHost

/// Which sensor an event comes from (Herald API: every delegate event names its sensor).
public enum SensorType: UInt8, Sendable, Equatable {
    /// Bluetooth Low Energy: the Herald sensor.
    case ble
    /// The sensor array itself (its on/off state).
    case array
    /// Anything an application adds.
    case other
}

/// A sensor's state as the delegate sees it.
public enum SensorState: Sendable, Equatable {
    case on
    case off
    /// The controller failed or is missing; the runtime is bringing it up again.
    case unavailable
}

/// An ephemeral name for a detected device, unique within one run (a counter from 1). Never derived
/// from the payload or the Bluetooth address, so it says nothing about the person.
public struct TargetIdentifier: Equatable, Hashable, Sendable {
    public var value: UInt32
    public init(_ value: UInt32) { self.value = value }
}

/// What a proximity value means (Herald API: RSSI is the only unit a BLE sensor reports).
public enum ProximityMeasurementUnit: Sendable, Equatable {
    case rssi
}

/// A proximity measurement: the RSSI of one advert, with the advertiser's Tx power as calibration when
/// it was advertised (Core 5.4 Vol 3 Part C 11.1.5), so analysis can estimate path loss.
public struct Proximity: Sendable, Equatable {
    public var unit: ProximityMeasurementUnit
    /// dBm.
    public var value: Int16
    /// Tx power in dBm, when advertised.
    public var calibration: Int8?
    public init(unit: ProximityMeasurementUnit = .rssi, value: Int16, calibration: Int8? = nil) {
        self.unit = unit
        self.value = value
        self.calibration = calibration
    }
}

/// Fixed sizes of the sensor's stored data.
public enum HeraldSensorLimits {
    /// The longest payload stored and read. Herald supports fixed and variable payloads up to 510
    /// octets (integration guide; its performance figures use a 129-octet payload), read with Read
    /// Blob (Core 5.4 Vol 3 Part G 4.8.3). Embedded builds keep 64 octets: a Simple payload (21
    /// octets: header and contact identifier) with up to 43 octets of extended data, or a venue
    /// beacon's with a premises name. Each octet is 20 of a firmware wearable's RAM (16 devices and
    /// 4 links): 510 would be 7.5 KB more, 128 was 1.3 KB more, on a 16 KB chip. The Herald test
    /// app's 129-octet payloads are out of reach of an Embedded build (they were at 128 too).
    /// Longer payloads are refused rather than stored truncated (a truncated payload could merge two
    /// people), and the device backs off like any other whose read fails.
    public static let payloadCapacity = PayloadBytes.capacity
    /// Largest payload-sharing list in one signal write (Herald: 510 bytes, so the message with its
    /// 5-byte header fits in one 512-byte attribute value, Core 5.4 Vol 3 Part F 3.2.9).
    public static let sharingCapacity = 510
    /// Largest immediate-send data.
    public static let immediateSendCapacity = 128
    /// Most payloads one shared list is split into.
    public static let sharedPayloadsCapacity = 32
}

/// Payload bytes as stored for one device (see `HeraldSensorLimits.payloadCapacity`).
#if hasFeature(Embedded)
public typealias PayloadBytes = FixedBytes<64>
#else
public typealias PayloadBytes = FixedBytes<510>
#endif

/// The signal message the central is writing (`HeraldCentral.outgoing`). What it writes is immediate
/// send's 3 + 128 octets at most, or payload sharing, which goes to iOS peers only and in one Write
/// Request of at most ATT_MTU-3 octets (`HeraldCentralProcedure.outgoingLimit`; the list is cut to
/// what fits, whole payloads). Embedded builds keep 136 octets: immediate send's 131, and the whole
/// of a sharing message at the firmware wearable's ATT_MTU of 136 (`WearableServer.LinkBuffers`); a
/// firmware sensor with a larger ATT_MTU shares up to 131 octets per write. Host builds keep room for
/// a full 510-octet sharing list and its header (a peer's MTU fed by hand, as tests do, may allow it).
#if hasFeature(Embedded)
public typealias OutgoingSignalBytes = FixedBytes<136>
#else
public typealias OutgoingSignalBytes = FixedBytes<520>
#endif

/// Supplies our payload and knows how payloads are laid out (Herald API `PayloadDataSupplier`).
/// Used generically (`HeraldSensor<Supplier, ...>`), never as an existential.
///
/// It is the sensor's one provider of our payload: being a `HeraldPayloadSource`, it is asked by UTC
/// second (`writePayload(at:to:)`, as the Herald API asks by timestamp), on the one clock the
/// peripheral half keeps (`HeraldClock`), and that half serves what it writes (`SensorCore` answers
/// `HeraldPeripheralDelegate.heraldPeripheral(payloadAt:into:)`).
public protocol PayloadDataSupplier: HeraldPayloadSource {
    /// The length of the first payload in a concatenated list (payload sharing), nil when the bytes
    /// do not start with a whole payload. The sensor splits lists with it.
    func firstPayloadLength(in list: Span<UInt8>) -> Int?
}

/// The payloads in a concatenated list, split with a supplier: offsets into the borrowed bytes.
public struct SharedPayloads: ~Escapable {
    public let data: Span<UInt8>
    var bounds: InlineArray<33, UInt16>
    public private(set) var count: Int
    /// Bytes after the last whole payload (a malformed tail; not delivered).
    public private(set) var trailingBytes: Int

    @_lifetime(copy data)
    public init<P: PayloadDataSupplier>(splitting data: Span<UInt8>, with supplier: borrowing P) {
        self.data = data
        bounds = InlineArray(repeating: 0)
        var n = 0
        var offset = 0
        while n < HeraldSensorLimits.sharedPayloadsCapacity, offset < data.count,
              let length = supplier.firstPayloadLength(in: data.extracting(offset..<data.count)),
              length > 0, offset + length <= data.count {
            offset += length
            n += 1
            bounds[n] = UInt16(truncatingIfNeeded: offset)
        }
        count = n
        trailingBytes = data.count - offset
    }

    public subscript(i: Int) -> Span<UInt8> {
        @_lifetime(copy self)
        get { data.extracting(Int(bounds[i])..<Int(bounds[i + 1])) }
    }
}
