/// Packet Boundary flag of an HCI ACL data packet (Core 5.4 Vol 4 Part E 5.4.2, Table 5.2).
///
/// On LE-U the host sends `firstNonFlushable` then `continuing`; the controller delivers
/// `firstFlushable` then `continuing`. `complete` (0b11, a complete automatically-flushable PDU) is not
/// used on LE-U; if a controller sends it anyway it still begins a PDU, so the reassembler treats it
/// as a start.
public enum HCIACLPacketBoundary: UInt8, Sendable, Equatable {
    case firstNonFlushable = 0b00
    case continuing = 0b01
    case firstFlushable = 0b10
    case complete = 0b11

    /// Whether a fragment with this flag begins a new higher-layer PDU.
    public var isStart: Bool { self != .continuing }
}

/// Broadcast flag (Core 5.4 Vol 4 Part E 5.4.2). LE-U traffic is always point-to-point (0b00);
/// the other values are BR/EDR-only or reserved and are kept raw so the caller can drop them.
public enum HCIACLBroadcast: UInt8, Sendable, Equatable {
    case pointToPoint = 0b00
    case brEdrBroadcast = 0b01
    case reserved2 = 0b10
    case reserved3 = 0b11
}

/// The four-byte ACL header: handle and flags (u16), data total length (u16).
///
/// Core 5.4 Vol 4 Part E 5.4.2: the handle is 12 bits (0x0000…0x0EFF valid), PB flag bits 12–13,
/// BC flag bits 14–15. Writes the header without the H4 indicator.
public struct HCIACLDataHeader: Sendable, Equatable {
    public static let size = 4
    /// The highest valid connection handle (Core 5.4 Vol 4 Part E 5.4.2).
    public static let maxHandle: UInt16 = 0x0EFF

    public var handle: UInt16
    public var boundary: HCIACLPacketBoundary
    public var broadcast: HCIACLBroadcast
    public var dataLength: UInt16

    public init(handle: UInt16, boundary: HCIACLPacketBoundary, broadcast: HCIACLBroadcast = .pointToPoint,
                dataLength: UInt16) {
        self.handle = handle & 0x0FFF
        self.boundary = boundary
        self.broadcast = broadcast
        self.dataLength = dataLength
    }

    public static func read(_ r: inout ByteReader) throws(DecodeError) -> HCIACLDataHeader {
        let word = try r.u16()
        let length = try r.u16()
        // Both 2-bit fields cover all four values, so these never fail.
        let pb = HCIACLPacketBoundary(rawValue: UInt8(truncatingIfNeeded: (word &>> 12) & 0b11)) ?? .continuing
        let bc = HCIACLBroadcast(rawValue: UInt8(truncatingIfNeeded: (word &>> 14) & 0b11)) ?? .reserved3
        return HCIACLDataHeader(handle: word & 0x0FFF, boundary: pb, broadcast: bc, dataLength: length)
    }

    public func write<S: ByteSink>(to sink: inout S) {
        let word = (handle & 0x0FFF) | UInt16(boundary.rawValue) &<< 12 | UInt16(broadcast.rawValue) &<< 14
        sink.append(u16: word)
        sink.append(u16: dataLength)
    }

    /// Writes the H4 indicator (0x02, Core 5.4 Vol 4 Part A 2) followed by this header.
    public func writeH4<S: ByteSink>(to sink: inout S) {
        sink.append(H4PacketType.acl.rawValue)
        write(to: &sink)
    }
}

/// A zero-copy view of one HCI ACL data packet as it arrives after the H4 indicator
/// (Core 5.4 Vol 4 Part E 5.4.2): header, then exactly `dataLength` bytes.
public struct HCIACLDataPacket: ~Escapable {
    public let header: HCIACLDataHeader
    public let data: Span<UInt8>

    public var handle: UInt16 { header.handle }
    public var boundary: HCIACLPacketBoundary { header.boundary }
    public var broadcast: HCIACLBroadcast { header.broadcast }

    /// Parses a packet; the declared length must match the bytes present exactly, since the H4
    /// framer hands over one whole packet (a mismatch means the stream is out of sync).
    @_lifetime(copy bytes)
    public init(parsing bytes: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(bytes, atLeast: 4)
        let header = try HCIACLDataHeader.read(&r)
        let declared = Int(header.dataLength)
        guard declared == r.remaining else {
            throw .badLength(field: "ACL data total length", declared: declared, limit: r.remaining)
        }
        self.header = header
        self.data = r.rest()
    }

    /// A view of a packet built elsewhere (tests, loopback).
    @_lifetime(copy data)
    public init(header: HCIACLDataHeader, data: Span<UInt8>) {
        self.header = header
        self.data = data
    }
}
