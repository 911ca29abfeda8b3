/// Splits one L2CAP B-frame (basic header + information payload) into H4 ACL packets that fit the
/// controller's buffers (Core 5.4 Vol 4 Part E 5.4.2; Vol 3 Part A 7.2.1).
///
/// The first packet carries PB flag 0b00 (first non-automatically-flushable, the only start flag a
/// host may use on LE-U), the rest 0b01 (continuing). `maxDataLength` is the controller's LE ACL Data
/// Packet Length from LE Read Buffer Size (27 on a default Zephyr build, up to 251).
///
/// The fragmenter is a plain value holding only positions, so a caller that runs out of controller
/// credits can keep it and resume later with the same payload. It borrows nothing.
public struct ACLFragmenter: Sendable, Equatable {
    /// The most an L2CAP basic header's 16-bit length can describe.
    public static let maxPayload = 0xFFFF

    public let handle: UInt16
    public let channel: L2CAPChannelID
    public let payloadLength: Int
    public let maxDataLength: Int
    /// Bytes of the B-frame (header included) already written.
    public private(set) var offset = 0

    /// Returns nil when the payload cannot be described by a basic header, the handle is outside
    /// 0x0000…0x0EFF, or the data length is zero.
    public init?(handle: UInt16, channel: L2CAPChannelID, payloadLength: Int, maxDataLength: Int) {
        guard payloadLength >= 0, payloadLength <= Self.maxPayload, handle <= HCIACLDataHeader.maxHandle,
              maxDataLength > 0, maxDataLength <= 0xFFFF
        else { return nil }
        self.init(handle: handle, channel: channel, payloadLength: payloadLength, maxDataLength: maxDataLength, offset: 0)
    }

    /// Resumes a B-frame of which `offset` octets were already written (the outbound queue keeps
    /// only that position). The caller has validated the arguments.
    init(handle: UInt16, channel: L2CAPChannelID, payloadLength: Int, maxDataLength: Int, offset: Int) {
        self.handle = handle
        self.channel = channel
        self.payloadLength = payloadLength
        self.maxDataLength = maxDataLength
        self.offset = offset
    }

    /// B-frame size: basic header plus payload.
    public var frameLength: Int { L2CAPBasicHeader.size + payloadLength }
    public var isFinished: Bool { offset >= frameLength }
    /// How many ACL packets the whole B-frame takes.
    public var fragmentCount: Int { (frameLength + maxDataLength - 1) / maxDataLength }
    /// How many are still to be written.
    public var remainingFragments: Int { (frameLength - offset + maxDataLength - 1) / maxDataLength }
    /// H4 bytes of the next packet (indicator + ACL header + data), 0 when finished.
    public var nextPacketLength: Int {
        isFinished ? 0 : 1 + HCIACLDataHeader.size + min(maxDataLength, frameLength - offset)
    }
    /// The largest H4 packet this fragmenter writes.
    public var maxPacketLength: Int { 1 + HCIACLDataHeader.size + min(maxDataLength, frameLength) }

    /// Writes the next H4 ACL packet (indicator 0x02, header, data) to `sink`.
    /// Returns false, writing nothing, when finished or when `payload` is not the payload this
    /// fragmenter was made for (by length).
    public mutating func writeNext<S: ByteSink>(payload: Span<UInt8>, to sink: inout S) -> Bool {
        guard !isFinished, payload.count == payloadLength else { return false }
        let chunk = min(maxDataLength, frameLength - offset)
        HCIACLDataHeader(handle: handle, boundary: offset == 0 ? .firstNonFlushable : .continuing,
                         dataLength: UInt16(truncatingIfNeeded: chunk)).writeH4(to: &sink)
        var position = offset
        let end = offset + chunk
        // The basic header occupies B-frame bytes 0..<4; payload byte i is B-frame byte i + 4.
        while position < end && position < L2CAPBasicHeader.size {
            let header = position < 2 ? UInt16(truncatingIfNeeded: payloadLength) : channel.rawValue
            sink.append(UInt8(truncatingIfNeeded: header &>> UInt16(8 * (position & 1))))
            position += 1
        }
        if position < end {
            sink.append(contentsOf: payload.extracting((position - L2CAPBasicHeader.size)..<(end - L2CAPBasicHeader.size)))
        }
        offset = end
        return true
    }

    /// Writes every fragment of `payload` on `channel` to `sink` in one go (for callers that already
    /// hold enough credits). Returns the number of packets written, 0 on invalid arguments.
    @discardableResult
    public static func writeAll<S: ByteSink>(handle: UInt16, channel: L2CAPChannelID, payload: Span<UInt8>,
                                             maxDataLength: Int, to sink: inout S) -> Int {
        guard var f = ACLFragmenter(handle: handle, channel: channel, payloadLength: payload.count,
                                    maxDataLength: maxDataLength) else { return 0 }
        var n = 0
        while f.writeNext(payload: payload, to: &sink) { n += 1 }
        return n
    }
}
