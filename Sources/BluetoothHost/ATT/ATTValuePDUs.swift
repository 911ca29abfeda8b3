// ATT PDUs that carry one attribute value. They borrow the bytes they were parsed from (or the bytes
// a sender wants to send), so they are `~Escapable`: a value can be inspected or forwarded without a copy.

/// ATT_FIND_BY_TYPE_VALUE_REQ (Core 5.4 Vol 3 Part F 3.4.3.3). The type is always a 16-bit UUID.
public struct ATTFindByTypeValueRequest: ATTPDU, ~Escapable {
    public static let opcode = ATTOpcode.findByTypeValueRequest
    public var startingHandle: UInt16
    public var endingHandle: UInt16
    public var attributeType: UInt16
    public var attributeValue: Span<UInt8>

    @_lifetime(copy attributeValue)
    public init(startingHandle: UInt16, endingHandle: UInt16, attributeType: UInt16, attributeValue: Span<UInt8>) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.attributeType = attributeType
        self.attributeValue = attributeValue
    }

    @_lifetime(copy pdu)
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, atLeast: 7)
        try r.expectATTOpcode(Self.opcode)
        startingHandle = try r.u16()
        endingHandle = try r.u16()
        attributeType = try r.u16()
        attributeValue = r.rest()
    }

    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(u16: startingHandle)
        sink.append(u16: endingHandle)
        sink.append(u16: attributeType)
        sink.append(contentsOf: attributeValue)
    }
}

/// The PDUs shaped `opcode, value` (Read Response, Read Blob Response, Read Multiple Response).
public protocol ATTValueOnlyPDU: ATTPDU, ~Escapable {
    var value: Span<UInt8> { @_lifetime(copy self) get }
}

extension ATTValueOnlyPDU where Self: ~Escapable {
    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(contentsOf: value)
    }
}

/// ATT_READ_RSP (Part F 3.4.4.4): the value, at most ATT_MTU-1 octets.
public struct ATTReadResponse: ATTValueOnlyPDU, ~Escapable {
    public static let opcode = ATTOpcode.readResponse
    public var value: Span<UInt8>
    @_lifetime(copy value) public init(value: Span<UInt8>) { self.value = value }
    @_lifetime(copy pdu)
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, atLeast: 1)
        try r.expectATTOpcode(Self.opcode)
        value = r.rest()
    }
}

/// ATT_READ_BLOB_RSP (Part F 3.4.4.6): the part of the value from the requested offset.
public struct ATTReadBlobResponse: ATTValueOnlyPDU, ~Escapable {
    public static let opcode = ATTOpcode.readBlobResponse
    public var value: Span<UInt8>
    @_lifetime(copy value) public init(value: Span<UInt8>) { self.value = value }
    @_lifetime(copy pdu)
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, atLeast: 1)
        try r.expectATTOpcode(Self.opcode)
        value = r.rest()
    }
}

/// ATT_READ_MULTIPLE_RSP (Part F 3.4.4.8): the requested values concatenated with no lengths, so
/// only the client (which knows the lengths it asked for) can split it.
public struct ATTReadMultipleResponse: ATTValueOnlyPDU, ~Escapable {
    public static let opcode = ATTOpcode.readMultipleResponse
    public var value: Span<UInt8>
    @_lifetime(copy value) public init(value: Span<UInt8>) { self.value = value }
    @_lifetime(copy pdu)
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, atLeast: 1)
        try r.expectATTOpcode(Self.opcode)
        value = r.rest()
    }
}

/// The PDUs shaped `opcode, handle, value`.
public protocol ATTHandleValuePDU: ATTPDU, ~Escapable {
    var handle: UInt16 { get }
    var value: Span<UInt8> { @_lifetime(copy self) get }
    @_lifetime(copy value)
    init(handle: UInt16, value: Span<UInt8>)
}

extension ATTHandleValuePDU where Self: ~Escapable {
    /// Parses `opcode, handle, value`: the value is whatever follows the handle.
    @_lifetime(copy pdu)
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, atLeast: 3)
        try r.expectATTOpcode(Self.opcode)
        let handle = try r.u16()
        self.init(handle: handle, value: r.rest())
    }

    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(u16: handle)
        sink.append(contentsOf: value)
    }
}

/// ATT_WRITE_REQ (Part F 3.4.5.1).
public struct ATTWriteRequest: ATTHandleValuePDU, ~Escapable {
    public static let opcode = ATTOpcode.writeRequest
    public var handle: UInt16
    public var value: Span<UInt8>
    @_lifetime(copy value)
    public init(handle: UInt16, value: Span<UInt8>) { self.handle = handle; self.value = value }
}

/// ATT_WRITE_CMD (Part F 3.4.5.3): a write with no response, errors included.
public struct ATTWriteCommand: ATTHandleValuePDU, ~Escapable {
    public static let opcode = ATTOpcode.writeCommand
    public var handle: UInt16
    public var value: Span<UInt8>
    @_lifetime(copy value)
    public init(handle: UInt16, value: Span<UInt8>) { self.handle = handle; self.value = value }
}

/// ATT_HANDLE_VALUE_NTF (Part F 3.4.7.1): value at most ATT_MTU-3 octets.
public struct ATTHandleValueNotification: ATTHandleValuePDU, ~Escapable {
    public static let opcode = ATTOpcode.handleValueNotification
    public var handle: UInt16
    public var value: Span<UInt8>
    @_lifetime(copy value)
    public init(handle: UInt16, value: Span<UInt8>) { self.handle = handle; self.value = value }
}

/// ATT_HANDLE_VALUE_IND (Part F 3.4.7.2): like a notification but confirmed by the client.
public struct ATTHandleValueIndication: ATTHandleValuePDU, ~Escapable {
    public static let opcode = ATTOpcode.handleValueIndication
    public var handle: UInt16
    public var value: Span<UInt8>
    @_lifetime(copy value)
    public init(handle: UInt16, value: Span<UInt8>) { self.handle = handle; self.value = value }
}

/// ATT_SIGNED_WRITE_CMD (Part F 3.4.5.4): a Write Command followed by a 12-octet signature
/// (sign counter + MAC, Core 5.4 Vol 3 Part H 2.4.5).
public struct ATTSignedWriteCommand: ATTPDU, ~Escapable {
    public static let opcode = ATTOpcode.signedWriteCommand
    public static let signatureLength = 12
    public var handle: UInt16
    public var value: Span<UInt8>
    public var authenticationSignature: Span<UInt8>

    @_lifetime(copy value, copy authenticationSignature)
    public init(handle: UInt16, value: Span<UInt8>, authenticationSignature: Span<UInt8>) {
        self.handle = handle
        self.value = value
        self.authenticationSignature = authenticationSignature
    }

    @_lifetime(copy pdu)
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, atLeast: 3)
        try r.expectATTOpcode(Self.opcode)
        handle = try r.u16()
        let valueLength = r.remaining - Self.signatureLength
        guard valueLength >= 0 else { throw .truncated(needed: pdu.count - valueLength, available: pdu.count) }
        value = try r.bytes(valueLength)
        authenticationSignature = r.rest()
    }

    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(u16: handle)
        sink.append(contentsOf: value)
        sink.append(contentsOf: authenticationSignature)
    }
}

/// The PDUs shaped `opcode, handle, offset, value` (Prepare Write Request and Response; the
/// response echoes the request so the client can check the server queued what it sent).
public protocol ATTPrepareWritePDU: ATTPDU, ~Escapable {
    var handle: UInt16 { get }
    var offset: UInt16 { get }
    var partValue: Span<UInt8> { @_lifetime(copy self) get }
}

extension ATTPrepareWritePDU where Self: ~Escapable {
    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(u16: handle)
        sink.append(u16: offset)
        sink.append(contentsOf: partValue)
    }
}

/// ATT_PREPARE_WRITE_REQ (Part F 3.4.6.1).
public struct ATTPrepareWriteRequest: ATTPrepareWritePDU, ~Escapable {
    public static let opcode = ATTOpcode.prepareWriteRequest
    public var handle: UInt16
    public var offset: UInt16
    public var partValue: Span<UInt8>
    @_lifetime(copy partValue)
    public init(handle: UInt16, offset: UInt16, partValue: Span<UInt8>) {
        self.handle = handle; self.offset = offset; self.partValue = partValue
    }
    @_lifetime(copy pdu)
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, atLeast: 5)
        try r.expectATTOpcode(Self.opcode)
        handle = try r.u16()
        offset = try r.u16()
        partValue = r.rest()
    }
}

/// ATT_PREPARE_WRITE_RSP (Part F 3.4.6.2).
public struct ATTPrepareWriteResponse: ATTPrepareWritePDU, ~Escapable {
    public static let opcode = ATTOpcode.prepareWriteResponse
    public var handle: UInt16
    public var offset: UInt16
    public var partValue: Span<UInt8>
    @_lifetime(copy partValue)
    public init(handle: UInt16, offset: UInt16, partValue: Span<UInt8>) {
        self.handle = handle; self.offset = offset; self.partValue = partValue
    }
    @_lifetime(copy pdu)
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, atLeast: 5)
        try r.expectATTOpcode(Self.opcode)
        handle = try r.u16()
        offset = try r.u16()
        partValue = r.rest()
    }
}
