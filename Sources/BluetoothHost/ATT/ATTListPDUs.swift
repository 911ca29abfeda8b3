// ATT PDUs whose parameters are a list of fixed-length entries. A client walks them with a
// `~Escapable` iterator over the received bytes (validated once at parse time, so iteration cannot
// fail); a server fills them with the `Builder`s in ATTListBuilders.swift, which stop at ATT_MTU.

/// ATT_FIND_INFORMATION_RSP (Core 5.4 Vol 3 Part F 3.4.3.2): handle/type pairs, all 16-bit
/// (format 0x01) or all 128-bit (format 0x02).
public struct ATTFindInformationResponse: ATTPDU, ~Escapable {
    public static let opcode = ATTOpcode.findInformationResponse
    /// Format octet: 0x01 = 16-bit UUIDs, 0x02 = 128-bit UUIDs.
    public var format: UInt8
    public var informationData: Span<UInt8>

    /// Octets per entry for `format`: handle plus UUID.
    public var entryLength: Int { format == 1 ? 4 : 18 }
    public var count: Int { informationData.count / entryLength }

    @_lifetime(copy informationData)
    public init(format: UInt8, informationData: Span<UInt8>) {
        self.format = format
        self.informationData = informationData
    }

    @_lifetime(copy pdu)
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, atLeast: 2)
        try r.expectATTOpcode(Self.opcode)
        format = try r.u8()
        guard format == 1 || format == 2 else { throw .invalidValue(field: "Find Information format", value: Int(format)) }
        informationData = r.rest()
        let n = format == 1 ? 4 : 18
        guard informationData.count >= n, informationData.count % n == 0 else {
            throw .badLength(field: "Find Information data", declared: informationData.count, limit: n)
        }
    }

    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(format)
        sink.append(contentsOf: informationData)
    }

    public struct Entry: Sendable {
        public var handle: UInt16
        public var type: BluetoothUUID
    }

    public struct Iterator: ~Escapable {
        var reader: ByteReader
        let uuidLength: Int
        @_lifetime(copy reader) init(reader: ByteReader, uuidLength: Int) {
            self.reader = reader
            self.uuidLength = uuidLength
        }
        public mutating func next() -> Entry? {
            guard reader.remaining >= 2 + uuidLength else { return nil }
            do throws(DecodeError) {
                let handle = try reader.u16()
                let type = try BluetoothUUID(wire: reader.bytes(uuidLength))
                return Entry(handle: handle, type: type)
            } catch { return nil }
        }
    }

    @_lifetime(copy self)
    public func makeIterator() -> Iterator {
        Iterator(reader: ByteReader(informationData), uuidLength: format == 1 ? 2 : 16)
    }
}

/// ATT_FIND_BY_TYPE_VALUE_RSP (Part F 3.4.3.4): found handle / group end handle pairs.
public struct ATTFindByTypeValueResponse: ATTPDU, ~Escapable {
    public static let opcode = ATTOpcode.findByTypeValueResponse
    public var handlesInformationList: Span<UInt8>
    public var count: Int { handlesInformationList.count / 4 }

    @_lifetime(copy handlesInformationList)
    public init(handlesInformationList: Span<UInt8>) { self.handlesInformationList = handlesInformationList }

    @_lifetime(copy pdu)
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = ByteReader(pdu)
        try r.expectATTOpcode(Self.opcode)
        handlesInformationList = r.rest()
        guard handlesInformationList.count >= 4, handlesInformationList.count % 4 == 0 else {
            throw .badLength(field: "Handles Information List", declared: handlesInformationList.count, limit: 4)
        }
    }

    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(contentsOf: handlesInformationList)
    }

    public struct Entry: Equatable, Sendable {
        public var foundAttributeHandle: UInt16
        public var groupEndHandle: UInt16
    }

    public struct Iterator: ~Escapable {
        var reader: ByteReader
        @_lifetime(copy reader) init(reader: ByteReader) { self.reader = reader }
        public mutating func next() -> Entry? {
            guard reader.remaining >= 4 else { return nil }
            do throws(DecodeError) {
                return Entry(foundAttributeHandle: try reader.u16(), groupEndHandle: try reader.u16())
            } catch { return nil }
        }
    }

    @_lifetime(copy self)
    public func makeIterator() -> Iterator { Iterator(reader: ByteReader(handlesInformationList)) }
}

/// ATT_READ_BY_TYPE_RSP (Part F 3.4.4.2): handle/value pairs that all have the same length.
public struct ATTReadByTypeResponse: ATTPDU, ~Escapable {
    public static let opcode = ATTOpcode.readByTypeResponse
    /// Octets per entry (handle + value), 2...255.
    public var length: UInt8
    public var attributeDataList: Span<UInt8>
    public var count: Int { attributeDataList.count / Int(length) }

    @_lifetime(copy attributeDataList)
    public init(length: UInt8, attributeDataList: Span<UInt8>) {
        self.length = length
        self.attributeDataList = attributeDataList
    }

    @_lifetime(copy pdu)
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, atLeast: 2)
        try r.expectATTOpcode(Self.opcode)
        length = try r.u8()
        guard length >= 2 else { throw .invalidValue(field: "Read By Type length", value: Int(length)) }
        attributeDataList = r.rest()
        let n = Int(length)
        guard attributeDataList.count >= n, attributeDataList.count % n == 0 else {
            throw .badLength(field: "Attribute Data List", declared: attributeDataList.count, limit: n)
        }
    }

    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(length)
        sink.append(contentsOf: attributeDataList)
    }

    public struct Entry: ~Escapable {
        public var handle: UInt16
        public var value: Span<UInt8>
        @_lifetime(copy value) init(handle: UInt16, value: Span<UInt8>) { self.handle = handle; self.value = value }
    }

    public struct Iterator: ~Escapable {
        var reader: ByteReader
        let valueLength: Int
        @_lifetime(copy reader) init(reader: ByteReader, valueLength: Int) {
            self.reader = reader
            self.valueLength = valueLength
        }
        @_lifetime(copy self)
        public mutating func next() -> Entry? {
            guard reader.remaining >= 2 + valueLength else { return nil }
            do throws(DecodeError) {
                let handle = try reader.u16()
                return Entry(handle: handle, value: try reader.bytes(valueLength))
            } catch { return nil }
        }
    }

    @_lifetime(copy self)
    public func makeIterator() -> Iterator {
        Iterator(reader: ByteReader(attributeDataList), valueLength: Int(length) - 2)
    }
}

/// ATT_READ_BY_GROUP_TYPE_RSP (Part F 3.4.4.10): handle / end group handle / value triples.
public struct ATTReadByGroupTypeResponse: ATTPDU, ~Escapable {
    public static let opcode = ATTOpcode.readByGroupTypeResponse
    /// Octets per entry (two handles + value), 4...255.
    public var length: UInt8
    public var attributeDataList: Span<UInt8>
    public var count: Int { attributeDataList.count / Int(length) }

    @_lifetime(copy attributeDataList)
    public init(length: UInt8, attributeDataList: Span<UInt8>) {
        self.length = length
        self.attributeDataList = attributeDataList
    }

    @_lifetime(copy pdu)
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, atLeast: 2)
        try r.expectATTOpcode(Self.opcode)
        length = try r.u8()
        guard length >= 4 else { throw .invalidValue(field: "Read By Group Type length", value: Int(length)) }
        attributeDataList = r.rest()
        let n = Int(length)
        guard attributeDataList.count >= n, attributeDataList.count % n == 0 else {
            throw .badLength(field: "Attribute Data List", declared: attributeDataList.count, limit: n)
        }
    }

    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(length)
        sink.append(contentsOf: attributeDataList)
    }

    public struct Entry: ~Escapable {
        public var handle: UInt16
        public var endGroupHandle: UInt16
        public var value: Span<UInt8>
        @_lifetime(copy value) init(handle: UInt16, endGroupHandle: UInt16, value: Span<UInt8>) {
            self.handle = handle
            self.endGroupHandle = endGroupHandle
            self.value = value
        }
    }

    public struct Iterator: ~Escapable {
        var reader: ByteReader
        let valueLength: Int
        @_lifetime(copy reader) init(reader: ByteReader, valueLength: Int) {
            self.reader = reader
            self.valueLength = valueLength
        }
        @_lifetime(copy self)
        public mutating func next() -> Entry? {
            guard reader.remaining >= 4 + valueLength else { return nil }
            do throws(DecodeError) {
                let handle = try reader.u16()
                let end = try reader.u16()
                return Entry(handle: handle, endGroupHandle: end, value: try reader.bytes(valueLength))
            } catch { return nil }
        }
    }

    @_lifetime(copy self)
    public func makeIterator() -> Iterator {
        Iterator(reader: ByteReader(attributeDataList), valueLength: Int(length) - 4)
    }
}

/// A list of 16-bit handles: the parameters of ATT_READ_MULTIPLE_REQ (Part F 3.4.4.7) and
/// ATT_READ_MULTIPLE_VARIABLE_REQ (Part F 3.4.4.11), both of which need at least two.
public struct ATTHandleList: ~Escapable {
    public var bytes: Span<UInt8>
    public var count: Int { bytes.count / 2 }
    @_lifetime(copy bytes) init(bytes: Span<UInt8>) { self.bytes = bytes }

    @_lifetime(copy bytes)
    static func parse(_ bytes: Span<UInt8>) throws(DecodeError) -> ATTHandleList {
        guard bytes.count >= 4 else { throw .truncated(needed: 5, available: bytes.count + 1) }
        guard bytes.count % 2 == 0 else { throw .badLength(field: "Set Of Handles", declared: bytes.count, limit: 2) }
        return ATTHandleList(bytes: bytes)
    }

    public subscript(i: Int) -> UInt16 { UInt16(bytes[2 * i]) | UInt16(bytes[2 * i + 1]) << 8 }
}

/// ATT_READ_MULTIPLE_REQ (Part F 3.4.4.7).
public struct ATTReadMultipleRequest: ATTPDU, ~Escapable {
    public static let opcode = ATTOpcode.readMultipleRequest
    public var setOfHandles: ATTHandleList
    /// `handles` is the little-endian handle list (two octets per handle).
    @_lifetime(copy handles)
    public init(handles: Span<UInt8>) throws(DecodeError) { setOfHandles = try .parse(handles) }
    @_lifetime(copy pdu)
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = ByteReader(pdu)
        try r.expectATTOpcode(Self.opcode)
        setOfHandles = try .parse(r.rest())
    }
    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(contentsOf: setOfHandles.bytes)
    }
}

/// ATT_READ_MULTIPLE_VARIABLE_REQ (Part F 3.4.4.11).
public struct ATTReadMultipleVariableRequest: ATTPDU, ~Escapable {
    public static let opcode = ATTOpcode.readMultipleVariableRequest
    public var setOfHandles: ATTHandleList
    @_lifetime(copy handles)
    public init(handles: Span<UInt8>) throws(DecodeError) { setOfHandles = try .parse(handles) }
    @_lifetime(copy pdu)
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = ByteReader(pdu)
        try r.expectATTOpcode(Self.opcode)
        setOfHandles = try .parse(r.rest())
    }
    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(contentsOf: setOfHandles.bytes)
    }
}
