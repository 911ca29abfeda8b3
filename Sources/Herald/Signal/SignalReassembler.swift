import BluetoothHost

/// What a signal characteristic write did to the per-connection reassembly.
public enum SignalWriteOutcome: Sendable, Equatable {
    /// An empty write (keep-awake); any partial message is left as it was.
    case keepAwake
    /// More fragments are needed; answer the write with success.
    case incomplete
    /// `message` now holds one whole, well-formed message of this kind.
    case complete(SignalMessageKind)
    /// The bytes can never form a valid message: answer with this ATT error (0x0D, Invalid Attribute
    /// Value Length, Core 5.4 Vol 3 Part F 3.4.1.1). The buffer has been cleared.
    case rejected(attError: UInt8)
}

/// Reassembles signal writes for one connection: a message arrives whole or as consecutive
/// fragments (typically 20 bytes); fragments are appended until the length the message declares is
/// reached. Pure and fixed-size: `Capacity` bounds the largest message accepted.
public struct SignalReassembler<let Capacity: Int> {
    public static var invalidAttributeValueLength: UInt8 { 0x0D }

    var buffer = FixedBytes<Capacity>()
    var completed = false

    public init() {}

    /// Bytes held for a message not yet complete.
    public var pendingCount: Int { completed ? 0 : buffer.count }

    /// The last completed message's bytes (valid after `.complete`, until the next write).
    public var message: Span<UInt8> {
        @_addressableSelf
        @_lifetime(borrow self)
        borrowing get { buffer.span }
    }

    public mutating func reset() { buffer.removeAll(); completed = false }

    public mutating func receive(_ fragment: Span<UInt8>) -> SignalWriteOutcome {
        if fragment.count == 0 { return .keepAwake }
        if completed { reset() }
        guard fragment.count <= buffer.freeCapacity else { return reject() }
        buffer.append(contentsOf: fragment)
        switch SignalMessage.expectedLength(prefix: buffer.span) {
        case .invalid:
            return reject()
        case .needMore:
            return .incomplete
        case .complete(let total):
            if total > Capacity || buffer.count > total { return reject() }
            if buffer.count < total { return .incomplete }
            do {
                let kind = try SignalMessage(parsing: buffer.span).kind
                completed = true
                return .complete(kind)
            } catch {
                return reject()
            }
        }
    }

    mutating func reject() -> SignalWriteOutcome {
        reset()
        return .rejected(attError: Self.invalidAttributeValueLength)
    }
}
