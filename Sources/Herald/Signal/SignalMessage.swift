import BluetoothHost

/// What a write to a Herald signal characteristic means (Herald protocol specification, "Signal
/// characteristic"). All integers are little-endian Int16, as the reference apps write them.
public enum SignalMessageKind: Sendable, Equatable {
    /// An empty write: keeps an iOS app awake, carries nothing.
    case keepAwake
    /// `01 [Int16 length][payload]`: the writer's own payload.
    case payload
    /// `02 [Int16 RSSI]`: the RSSI at which the writer hears us.
    case rssi
    /// `03 [Int16 RSSI][Int16 length][payloads]`: payloads the writer has seen, to share.
    case payloadSharing
    /// `04 [Int16 length][data]`: application data sent immediately.
    case immediateSend

    public var typeByte: UInt8? {
        switch self {
        case .keepAwake: return nil
        case .payload: return 0x01
        case .rssi: return 0x02
        case .payloadSharing: return 0x03
        case .immediateSend: return 0x04
        }
    }

    public init?(typeByte: UInt8) {
        switch typeByte {
        case 0x01: self = .payload
        case 0x02: self = .rssi
        case 0x03: self = .payloadSharing
        case 0x04: self = .immediateSend
        default: return nil
        }
    }
}

/// A whole signal message, borrowed from the bytes written.
public struct SignalMessage: ~Escapable {
    public let kind: SignalMessageKind
    /// RSSI for `.rssi` and `.payloadSharing`, else 0.
    public let rssi: Int16
    /// Payload, shared payloads or immediate data; empty for `.rssi` and `.keepAwake`.
    public let data: Span<UInt8>

    /// Parses exactly one message: the declared length must match the bytes present.
    @_lifetime(copy bytes)
    public init(parsing bytes: Span<UInt8>) throws(DecodeError) {
        var r = ByteReader(bytes)
        guard !r.isAtEnd else {
            kind = .keepAwake; rssi = 0; data = bytes
            return
        }
        let type = try r.u8()
        guard let k = SignalMessageKind(typeByte: type) else {
            throw .unexpectedCode(field: "signal message type", value: Int(type))
        }
        kind = k
        var value: Int16 = 0
        if k == .rssi || k == .payloadSharing { value = try r.i16() }
        rssi = value
        if k == .rssi {
            try r.expectEnd()
            data = r.rest()
            return
        }
        let length = Int(try r.i16())
        guard length >= 0 else { throw .invalidValue(field: "signal message length", value: length) }
        guard length == r.remaining else {
            if length > r.remaining { throw .truncated(needed: r.offset + length, available: bytes.count) }
            throw .trailingBytes(count: r.remaining - length)
        }
        data = r.rest()
    }

    /// How many bytes the message starting with `prefix` will have in total, once that is knowable.
    public static func expectedLength(prefix: Span<UInt8>) -> SignalLength {
        guard prefix.count > 0 else { return .complete(0) }
        guard let kind = SignalMessageKind(typeByte: prefix[0]) else { return .invalid }
        let lengthAt: Int
        switch kind {
        case .keepAwake: return .complete(0)
        case .rssi: return .complete(3)
        case .payload, .immediateSend: lengthAt = 1
        case .payloadSharing: lengthAt = 3
        }
        guard prefix.count >= lengthAt + 2 else { return .needMore }
        let length = Int(Int16(bitPattern: UInt16(prefix[lengthAt]) | UInt16(prefix[lengthAt + 1]) &<< 8))
        guard length >= 0 else { return .invalid }
        return .complete(lengthAt + 2 + length)
    }
}

public enum SignalLength: Sendable, Equatable {
    case needMore
    case complete(Int)
    case invalid
}

/// Encodes signal messages for our central role. Each function writes one whole message; send it
/// with `SignalFragmenter` when the peer expects 20-byte writes.
public enum SignalMessageEncoder {
    public static func writePayload<S: ByteSink>(_ payload: Span<UInt8>, to sink: inout S) throws(DecodeError) {
        try checkLength(payload.count)
        sink.append(0x01)
        sink.append(i16: Int16(truncatingIfNeeded: payload.count))
        sink.append(contentsOf: payload)
    }

    public static func writeRSSI<S: ByteSink>(_ rssi: Int16, to sink: inout S) {
        sink.append(0x02)
        sink.append(i16: rssi)
    }

    public static func writePayloadSharing<S: ByteSink>(rssi: Int16, payloads: Span<UInt8>, to sink: inout S) throws(DecodeError) {
        try checkLength(payloads.count)
        sink.append(0x03)
        sink.append(i16: rssi)
        sink.append(i16: Int16(truncatingIfNeeded: payloads.count))
        sink.append(contentsOf: payloads)
    }

    /// Payload sharing built in its buffer: `startPayloadSharing` writes the header with a zero
    /// length, the caller appends the payloads to the same buffer, and `finishPayloadSharing` fills in
    /// their length (the 510-octet list needs no buffer of its own, Herald signal characteristic 0x03).
    /// Returns where the message starts.
    public static func startPayloadSharing<let n: Int>(rssi: Int16, in buffer: inout FixedBytes<n>) -> Int {
        let start = buffer.count
        buffer.append(0x03)
        buffer.append(i16: rssi)
        buffer.append(u16: 0)
        return start
    }

    /// Fills in the length of the payloads appended since `startPayloadSharing` returned `start`.
    public static func finishPayloadSharing<let n: Int>(in buffer: inout FixedBytes<n>, start: Int) throws(DecodeError) {
        let length = buffer.count - start - 5
        try checkLength(length)
        buffer.storage[start + 3] = UInt8(truncatingIfNeeded: length)
        buffer.storage[start + 4] = UInt8(truncatingIfNeeded: length >> 8)
    }

    public static func writeImmediateSend<S: ByteSink>(_ data: Span<UInt8>, to sink: inout S) throws(DecodeError) {
        try checkLength(data.count)
        sink.append(0x04)
        sink.append(i16: Int16(truncatingIfNeeded: data.count))
        sink.append(contentsOf: data)
    }

    static func checkLength(_ n: Int) throws(DecodeError) {
        guard n <= Int(Int16.max) else { throw .badLength(field: "signal message length", declared: n, limit: Int(Int16.max)) }
    }
}

/// Cuts an encoded message into writes of at most `fragmentSize` bytes (20 = the default ATT MTU of
/// 23 minus the Write Request header, Core 5.4 Vol 3 Part F 3.4.5.1).
public struct SignalFragmenter: ~Escapable {
    public let message: Span<UInt8>
    public let fragmentSize: Int
    public private(set) var offset = 0

    public static let defaultFragmentSize = 20

    @_lifetime(copy message)
    public init(_ message: Span<UInt8>, fragmentSize: Int = SignalFragmenter.defaultFragmentSize) {
        self.message = message
        self.fragmentSize = max(1, fragmentSize)
    }

    public var count: Int { (message.count + fragmentSize - 1) / fragmentSize }

    @_lifetime(copy self)
    public mutating func next() -> Span<UInt8>? {
        guard offset < message.count else { return nil }
        let end = min(offset + fragmentSize, message.count)
        defer { offset = end }
        return message.extracting(offset..<end)
    }
}
