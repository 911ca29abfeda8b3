/// Receives whole H4 packets from a UART byte stream (Core 5.4 Vol 4 Part A 2).
public protocol H4PacketHandler {
    /// `packet` is the whole H4 packet including its indicator byte; it is only valid during the call.
    mutating func h4Packet(type: H4PacketType, packet: Span<UInt8>)
}

/// What the framer has had to throw away, for logs and robustness tests. They wrap rather than
/// trap (see `LEStackCounters`).
public struct H4FramerCounters: Equatable, Sendable {
    /// Bytes that could not start a packet (e.g. the 0x00 a board sends after reset, line noise).
    public var skippedBytes = 0
    /// Packets whose declared length exceeded the framer's capacity; their bytes were discarded.
    public var oversizePackets = 0
    /// Headers that looked implausible (unknown event code, handle out of range): the indicator was
    /// treated as garbage and scanning resumed at the next byte.
    public var rejectedHeaders = 0
    public var packets = 0
    public init() {}
}

/// A stream framer for H4 from controller to host.
///
/// UART H4 has no framing beyond the indicator byte and each packet's length field, so one stray byte
/// would otherwise shift every later packet. The framer therefore:
/// - accepts any chunking (a byte at a time, several packets in one read);
/// - skips bytes that cannot start a packet, counting them (a board reset often emits 0x00);
/// - checks each header for plausibility before trusting its length, and on a bad header drops only
///   the indicator byte and rescans the header bytes it had buffered, so it resynchronises on the
///   next real packet instead of swallowing a bogus length's worth of data;
/// - bounds every length by `capacity` and discards (counting) packets that do not fit.
///
/// `capacity` is the largest whole packet kept, indicator included: 1 + 4 + the controller's ACL
/// buffer length, or 1 + 2 + 255 for events, whichever is larger (258 covers Zephyr's defaults; 260
/// covers 251-byte ACL buffers plus header). An image that knows what it receives may choose less
/// (the venue beacon: no advertising reports, and ACL data of at most its ATT_MTU): never below
/// `smallestCapacity`, the largest answer bring-up asks for.
public struct H4Framer<let capacity: Int> {
    /// Command Complete of Read Local Supported Commands (Core 5.4 Vol 4 Part E 7.4.2): indicator,
    /// event header, then packets, opcode, status and the 64-octet bitmap.
    public static var smallestCapacity: Int { 1 + 2 + 4 + 64 }

    private var buffer = FixedBytes<capacity>()
    /// Bytes of an oversize packet still to discard.
    private var discarding = 0
    public private(set) var counters = H4FramerCounters()
    /// Largest ACL payload accepted; anything larger is treated as a bad header (LE max is 251 + headroom).
    public var maximumACLLength: Int

    public init(maximumACLLength: Int = 1024) {
        precondition(capacity >= Self.smallestCapacity, "H4 framer must hold bring-up's largest answer")
        self.maximumACLLength = maximumACLLength
    }

    /// Forgets any partial packet (after the runtime reopens the port or resets the controller).
    public mutating func reset() {
        buffer.removeAll()
        discarding = 0
        completedLength = 0
        expectedLength = 0
    }

    /// The packet the framer has completed and not yet released, if any.
    public var completedType: H4PacketType? { completedLength > 0 ? H4PacketType(rawValue: buffer[0]) : nil }

    /// The completed packet, indicator included. Valid until `release()`.
    public var completedPacket: Span<UInt8> {
        @_addressableSelf
        @_lifetime(borrow self)
        borrowing get { buffer.span.extracting(0..<completedLength) }
    }

    private var completedLength = 0
    /// The whole length of the packet being buffered once its header has been checked, else 0: from
    /// then on its body is copied in one go instead of byte by byte.
    private var expectedLength = 0

    /// Consumes bytes until a packet completes or the input runs out; returns how many it consumed.
    /// While a completed packet is waiting for `release()`, it consumes nothing.
    public mutating func ingest(_ bytes: Span<UInt8>) -> Int {
        // `used` stays within `bytes`, and each `n` within what is left of them and what is still
        // expected or discarded: the sums and differences cannot overflow, unchecked (the range
        // taken of `bytes` stays checked).
        var used = 0
        while completedLength == 0, used < bytes.count {
            if discarding > 0 {
                let n = min(discarding, bytes.count &- used)
                discarding &-= n
                used &+= n
                continue
            }
            if expectedLength > buffer.count {
                let n = min(expectedLength &- buffer.count, bytes.count &- used)
                buffer.append(contentsOf: bytes.extracting(used..<(used &+ n)))
                used &+= n
            } else {
                // Indicator and header bytes one at a time: each may change what the framer expects.
                buffer.append(bytes[used])
                used &+= 1
            }
            process()
        }
        return used
    }

    /// When nothing is buffered and `bytes` starts with a whole packet whose header passes the same
    /// checks `ingest` applies, returns that packet's length and counts it, without copying it: the
    /// caller hands on `bytes.extracting(0..<length)` and carries on after it. Otherwise returns 0 and
    /// the caller feeds the bytes to `ingest`. A UART read usually holds whole packets, so this is
    /// the common path.
    public mutating func wholePacket(at bytes: Span<UInt8>) -> Int {
        guard buffer.count == 0, completedLength == 0, discarding == 0, bytes.count > 0,
              let type = H4PacketType(rawValue: bytes[0]), type != .command,
              case .length(let total) = Self.header(of: type, in: bytes, maximumACLLength: maximumACLLength),
              total <= capacity, total <= bytes.count
        else { return 0 }
        counters.packets &+= 1
        return total
    }

    /// Drops the completed packet and looks for another among bytes already buffered
    /// (a rescan after a rejected header can leave a whole packet behind).
    public mutating func release() {
        guard completedLength > 0 else { return }
        buffer.removeFirst(completedLength)
        completedLength = 0
        process()
    }

    /// Push-style convenience over `ingest`/`release`, for callers whose handler is self-contained.
    public mutating func feed<H: H4PacketHandler>(_ bytes: Span<UInt8>, to handler: inout H) {
        var offset = 0
        while true {
            while let type = completedType {
                handler.h4Packet(type: type, packet: completedPacket)
                release()
            }
            guard offset < bytes.count else { return }
            let rest = bytes.extracting(offset..<bytes.count)
            let whole = wholePacket(at: rest)
            if whole > 0, let type = H4PacketType(rawValue: rest[0]) {
                handler.h4Packet(type: type, packet: rest.extracting(0..<whole))
                offset += whole
            } else {
                offset += ingest(rest)
            }
        }
    }

    /// Advances over the buffer until it needs more bytes or a packet is complete.
    private mutating func process() {
        expectedLength = 0
        while buffer.count > 0, completedLength == 0 {
            guard let type = H4PacketType(rawValue: buffer[0]), type != .command else {
                counters.skippedBytes &+= 1
                buffer.removeFirst(1)
                continue
            }
            switch Self.header(of: type, in: buffer.span, maximumACLLength: maximumACLLength) {
            case .needMore:
                return
            case .implausible:
                // Treat the indicator as noise and rescan what followed it.
                counters.rejectedHeaders &+= 1
                counters.skippedBytes &+= 1
                buffer.removeFirst(1)
                continue
            case .length(let total):
                if total > capacity {
                    counters.oversizePackets &+= 1
                    discarding = total - buffer.count
                    buffer.removeAll()
                    return
                }
                guard buffer.count >= total else {
                    expectedLength = total
                    return
                }
                counters.packets &+= 1
                completedLength = total
            }
        }
    }

    private enum Header { case needMore, implausible, length(Int) }

    /// The total length of the packet `bytes` starts with, once enough header bytes are there
    /// (Core 5.4 Vol 4 Part E 5.4).
    private static func header(of type: H4PacketType, in buffer: Span<UInt8>, maximumACLLength: Int) -> Header {
        switch type {
        case .event:
            guard buffer.count >= 3 else { return .needMore }
            let code = buffer[1], length = Int(buffer[2])
            guard Self.isPlausibleEvent(code: code, length: length) else { return .implausible }
            // Command Complete/Status and LE Meta carry a checkable byte soon after the header.
            if code == 0x3E {
                guard buffer.count >= 4 else { return .needMore }
                guard (0x01...0x3F).contains(buffer[3]) else { return .implausible }
            } else if code == 0x0E || code == 0x0F {
                let ogfIndex = code == 0x0E ? 5 : 6
                guard buffer.count > ogfIndex else { return .needMore }
                guard Self.isPlausibleOGF(buffer[unchecked: ogfIndex] >> 2) else { return .implausible }  // in bounds: the line above
            }
            return .length(3 + length)
        case .acl:
            guard buffer.count >= 5 else { return .needMore }
            let handle = (UInt16(buffer[1]) | UInt16(buffer[2]) << 8) & 0x0FFF
            let length = Int(buffer[3]) | Int(buffer[4]) << 8
            // Connection handles are 0x000-0xEFF (Core 5.4 Vol 4 Part E 5.4.2).
            guard handle <= 0x0EFF, length <= maximumACLLength else { return .implausible }
            return .length(5 + length)
        case .sco, .iso, .command:
            // This host never enables SCO or ISO data, and a controller never sends commands: such an
            // indicator on the line is noise.
            return .implausible
        }
    }

    /// Command groups a Command Complete/Status can name: none (NOP), link control, link policy,
    /// controller & baseband, informational, status, testing, LE, vendor (Core 5.4 Vol 4 Part E 7).
    static func isPlausibleOGF(_ ogf: UInt8) -> Bool {
        switch ogf {
        case 0x00...0x06, 0x08, 0x3F: return true
        default: return false
        }
    }

    /// The events an LE-only host can be sent, each with the parameter lengths it can have
    /// (Core 5.4 Vol 4 Part E 7.7). Rejecting everything else means a noise byte that happens to be
    /// 0x04 rarely makes the framer trust a bogus length and swallow real packets behind it.
    static func isPlausibleEvent(code: UInt8, length: Int) -> Bool {
        switch code {
        case 0x05: return length == 4  // Disconnection Complete
        case 0x08: return length == 4  // Encryption Change v1
        case 0x0C: return length == 8  // Read Remote Version Information Complete
        case 0x0E: return length >= 3  // Command Complete: packets, opcode (no status for NOP)
        case 0x0F: return length == 4  // Command Status
        case 0x10, 0x1A: return length == 1  // Hardware Error, Data Buffer Overflow
        case 0x13: return length >= 5 && (length - 1) % 4 == 0  // Number Of Completed Packets
        case 0x30: return length == 3  // Encryption Key Refresh Complete
        case 0x3E: return length >= 1  // LE Meta: subevent code first
        case 0x57: return length == 2  // Authenticated Payload Timeout Expired
        case 0x59: return length == 5  // Encryption Change v2
        case 0xFF: return true  // vendor specific: any length
        default: return false
        }
    }
}
