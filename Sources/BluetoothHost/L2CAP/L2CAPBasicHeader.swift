/// An L2CAP channel identifier (Core 5.4 Vol 3 Part A 2.1).
///
/// On LE-U only the fixed channels below are used by this host; dynamic channels (0x0040…0x007F)
/// are never opened because LE credit-based connection requests are refused.
public struct L2CAPChannelID: RawRepresentable, Equatable, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 0x0000 is never a valid destination (Core 5.4 Vol 3 Part A 2.1, Table 2.3).
    public static let null = L2CAPChannelID(rawValue: 0x0000)
    /// Attribute protocol (Core 5.4 Vol 3 Part A 2.1, Table 2.3).
    public static let att = L2CAPChannelID(rawValue: 0x0004)
    /// LE signalling channel.
    public static let leSignaling = L2CAPChannelID(rawValue: 0x0005)
    /// Security Manager protocol.
    public static let smp = L2CAPChannelID(rawValue: 0x0006)
}

/// The L2CAP basic header that begins every B-frame: length of the information payload (u16),
/// then channel ID (u16) (Core 5.4 Vol 3 Part A 3.1).
public struct L2CAPBasicHeader: Sendable, Equatable {
    public static let size = 4
    /// Length of the information payload, excluding this header.
    public var length: UInt16
    public var channel: L2CAPChannelID

    public init(length: UInt16, channel: L2CAPChannelID) {
        self.length = length
        self.channel = channel
    }

    public static func read(_ r: inout ByteReader) throws(DecodeError) -> L2CAPBasicHeader {
        let length = try r.u16()
        let channel = L2CAPChannelID(rawValue: try r.u16())
        return L2CAPBasicHeader(length: length, channel: channel)
    }

    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(u16: length)
        sink.append(u16: channel.rawValue)
    }
}

/// A zero-copy view of one complete B-frame: channel and information payload.
public struct L2CAPBasicFrame: ~Escapable {
    public let channel: L2CAPChannelID
    public let payload: Span<UInt8>

    /// Parses a whole B-frame; the declared length must equal the payload present
    /// (Core 5.4 Vol 3 Part A 3.1: a frame whose length disagrees is discarded).
    @_lifetime(copy bytes)
    public init(parsing bytes: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(bytes, atLeast: 4)
        let header = try L2CAPBasicHeader.read(&r)
        guard Int(header.length) == r.remaining else {
            throw .badLength(field: "L2CAP length", declared: Int(header.length), limit: r.remaining)
        }
        channel = header.channel
        payload = r.rest()
    }

    @_lifetime(copy payload)
    public init(channel: L2CAPChannelID, payload: Span<UInt8>) {
        self.channel = channel
        self.payload = payload
    }

    /// Writes header and payload (one unfragmented PDU).
    public func write<S: ByteSink>(to sink: inout S) {
        L2CAPBasicHeader(length: UInt16(truncatingIfNeeded: payload.count), channel: channel).write(to: &sink)
        sink.append(contentsOf: payload)
    }
}
