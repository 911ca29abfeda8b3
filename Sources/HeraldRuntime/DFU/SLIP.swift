/// SLIP framing (RFC 1055) as Nordic's serial DFU transport uses it: every request and response is
/// one SLIP packet terminated by END (0xC0). Nordic sends no leading END, and a decoder must tolerate
/// one (pyserial-based hosts sometimes emit it), so empty frames are skipped.
public enum SLIP {
    public static let end: UInt8 = 0xC0
    public static let escape: UInt8 = 0xDB
    public static let escapedEnd: UInt8 = 0xDC
    public static let escapedEscape: UInt8 = 0xDD

    /// Encodes one packet, END-terminated. Worst case doubles the size plus one byte, which is why the
    /// bootloader's reported MTU (an encoded size) leaves (mtu - 1) / 2 bytes of request.
    public static func encode(_ packet: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(packet.count + packet.count / 8 + 2)
        for byte in packet {
            switch byte {
            case end: out.append(escape); out.append(escapedEnd)
            case escape: out.append(escape); out.append(escapedEscape)
            default: out.append(byte)
            }
        }
        out.append(end)
        return out
    }

    /// The largest request (opcode included) that is guaranteed to fit a SLIP MTU once encoded.
    public static func maxPacketSize(forEncodedMTU mtu: Int) -> Int { max(0, (mtu - 1) / 2) }
}

/// Incremental SLIP decoder: feed it bytes as they arrive, collect whole packets.
public struct SLIPDecoder: Sendable {
    public enum Failure: Error, Equatable, Sendable {
        /// An ESC byte was followed by something other than ESC_END / ESC_ESC.
        case invalidEscape(UInt8)
        /// A frame grew past the limit without an END (line noise or a wrong baud rate).
        case frameTooLong(Int)
    }

    private var current: [UInt8] = []
    private var escaping = false
    private var discarding = false
    public let maxFrame: Int

    public init(maxFrame: Int = 8192) { self.maxFrame = maxFrame }

    /// Feeds bytes; returns the packets completed by them. A malformed frame is dropped whole and
    /// reported once in `errors`, so one bad frame never poisons the next.
    public mutating func feed<S: Sequence>(_ bytes: S, errors: inout [Failure]) -> [[UInt8]] where S.Element == UInt8 {
        var packets: [[UInt8]] = []
        for byte in bytes {
            if byte == SLIP.end {
                if !discarding && !current.isEmpty { packets.append(current) }
                current.removeAll(keepingCapacity: true)
                escaping = false
                discarding = false
                continue
            }
            if discarding { continue }
            if escaping {
                escaping = false
                switch byte {
                case SLIP.escapedEnd: current.append(SLIP.end)
                case SLIP.escapedEscape: current.append(SLIP.escape)
                default:
                    errors.append(.invalidEscape(byte))
                    discarding = true
                    continue
                }
            } else if byte == SLIP.escape {
                escaping = true
                continue
            } else {
                current.append(byte)
            }
            if current.count > maxFrame {
                errors.append(.frameTooLong(current.count))
                discarding = true
                current.removeAll(keepingCapacity: true)
            }
        }
        return packets
    }

    public mutating func feed<S: Sequence>(_ bytes: S) -> [[UInt8]] where S.Element == UInt8 {
        var ignored: [Failure] = []
        return feed(bytes, errors: &ignored)
    }
}
