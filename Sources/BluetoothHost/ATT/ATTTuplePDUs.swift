// ATT PDUs whose entries carry their own length (Core 5.4 added them for EATT, usable on any bearer).

/// ATT_READ_MULTIPLE_VARIABLE_RSP (Core 5.4 Vol 3 Part F 3.4.4.12): length/value tuples.
///
/// The server cuts the whole list at ATT_MTU-1 octets, so the last tuple may hold fewer value octets
/// than its length says (or even be cut inside its length field); the iterator reports that rather
/// than failing, because it is how the PDU is defined.
public struct ATTReadMultipleVariableResponse: ATTPDU, ~Escapable {
    public static let opcode = ATTOpcode.readMultipleVariableResponse
    public var lengthValueTupleList: Span<UInt8>

    @_lifetime(copy lengthValueTupleList)
    public init(lengthValueTupleList: Span<UInt8>) { self.lengthValueTupleList = lengthValueTupleList }

    @_lifetime(copy pdu)
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = ByteReader(pdu)
        try r.expectATTOpcode(Self.opcode)
        lengthValueTupleList = r.rest()
    }

    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(contentsOf: lengthValueTupleList)
    }

    public struct Entry: ~Escapable {
        /// The attribute's full value length as the server stated it.
        public var valueLength: UInt16
        public var value: Span<UInt8>
        /// True when the PDU ended before `valueLength` octets (read the rest with Read Blob).
        public var isTruncated: Bool { value.count < Int(valueLength) }
        @_lifetime(copy value) init(valueLength: UInt16, value: Span<UInt8>) {
            self.valueLength = valueLength
            self.value = value
        }
    }

    public struct Iterator: ~Escapable {
        var reader: ByteReader
        @_lifetime(copy reader) init(reader: ByteReader) { self.reader = reader }
        @_lifetime(copy self)
        public mutating func next() -> Entry? {
            guard reader.remaining >= 2 else { return nil }
            do throws(DecodeError) {
                let n = try reader.u16()
                return Entry(valueLength: n, value: try reader.bytes(min(Int(n), reader.remaining)))
            } catch { return nil }
        }
    }

    @_lifetime(copy self)
    public func makeIterator() -> Iterator { Iterator(reader: ByteReader(lengthValueTupleList)) }
}

/// ATT_MULTIPLE_HANDLE_VALUE_NTF (Part F 3.4.7.4): handle/length/value tuples, all complete.
public struct ATTMultipleHandleValueNotification: ATTPDU, ~Escapable {
    public static let opcode = ATTOpcode.multipleHandleValueNotification
    public var handleLengthValueTupleList: Span<UInt8>

    @_lifetime(copy handleLengthValueTupleList)
    public init(handleLengthValueTupleList: Span<UInt8>) { self.handleLengthValueTupleList = handleLengthValueTupleList }

    @_lifetime(copy pdu)
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = ByteReader(pdu)
        try r.expectATTOpcode(Self.opcode)
        handleLengthValueTupleList = r.rest()
        // Walk once so iteration can trust every length field.
        var walk = ByteReader(handleLengthValueTupleList)
        guard !walk.isAtEnd else { throw .truncated(needed: 5, available: pdu.count) }
        while !walk.isAtEnd {
            _ = try walk.u16()
            let n = try walk.u16()
            try walk.skip(Int(n))
        }
    }

    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(contentsOf: handleLengthValueTupleList)
    }

    public struct Entry: ~Escapable {
        public var handle: UInt16
        public var value: Span<UInt8>
        @_lifetime(copy value) init(handle: UInt16, value: Span<UInt8>) { self.handle = handle; self.value = value }
    }

    public struct Iterator: ~Escapable {
        var reader: ByteReader
        @_lifetime(copy reader) init(reader: ByteReader) { self.reader = reader }
        @_lifetime(copy self)
        public mutating func next() -> Entry? {
            do throws(DecodeError) {
                guard reader.remaining >= 4 else { return nil }
                let handle = try reader.u16()
                let n = try reader.u16()
                return Entry(handle: handle, value: try reader.bytes(Int(n)))
            } catch { return nil }
        }
    }

    @_lifetime(copy self)
    public func makeIterator() -> Iterator { Iterator(reader: ByteReader(handleLengthValueTupleList)) }
}
