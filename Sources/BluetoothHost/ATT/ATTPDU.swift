/// What every Attribute Protocol PDU value type shares: its opcode and how to serialise itself.
///
/// Parsing is a concrete `init(_ pdu: Span<UInt8>) throws(DecodeError)` on each type taking the whole
/// PDU including the opcode octet (Core 5.4 Vol 3 Part F 3.3). PDUs that carry attribute values are
/// `~Escapable` and borrow the received bytes, so a server or client never copies a value to look at it.
public protocol ATTPDU: ~Escapable {
    static var opcode: ATTOpcode { get }
    /// Writes the whole PDU, opcode first.
    func write<S: ByteSink>(to sink: inout S)
}

extension ATTPDU where Self: ~Escapable {
    /// Length on the wire (opcode included); compare with ATT_MTU before sending.
    public var encodedLength: Int {
        var counter = ByteCounter()
        write(to: &counter)
        return counter.count
    }
}

extension ByteReader {
    /// Reads the opcode octet and rejects any other than `expected` (a wrong-opcode PDU handed to a
    /// decoder is a caller bug or a peer lying; either way it must not be parsed as something else).
    mutating func expectATTOpcode(_ expected: ATTOpcode) throws(DecodeError) {
        let octet = try u8()
        guard octet == expected.rawValue else { throw .unexpectedCode(field: "ATT opcode", value: Int(octet)) }
    }

    /// A UUID that fills the rest of the PDU: ATT carries only 16- or 128-bit UUIDs (Part F 3.2.1).
    mutating func attUUIDRest() throws(DecodeError) -> BluetoothUUID {
        let n = remaining
        guard n == 2 || n == 16 else { throw .badLength(field: "ATT UUID", declared: n, limit: 16) }
        return try BluetoothUUID(wire: rest())
    }
}
