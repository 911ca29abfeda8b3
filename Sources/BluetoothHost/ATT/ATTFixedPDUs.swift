// The fixed-size ATT PDUs: no attribute values, so plain copyable value types.

/// ATT_ERROR_RSP (Core 5.4 Vol 3 Part F 3.4.1.1): which request failed, on which handle, and why.
/// The handle is 0x0000 when no single attribute is to blame (e.g. Invalid PDU, Request Not Supported).
public struct ATTErrorResponse: ATTPDU, Equatable, Sendable {
    public static let opcode = ATTOpcode.errorResponse
    public var requestOpcode: ATTOpcode
    public var handle: UInt16
    public var error: ATTErrorCode

    public init(requestOpcode: ATTOpcode, handle: UInt16, error: ATTErrorCode) {
        self.requestOpcode = requestOpcode
        self.handle = handle
        self.error = error
    }

    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, exactly: 5)
        try r.expectATTOpcode(Self.opcode)
        requestOpcode = ATTOpcode(rawValue: try r.u8())
        handle = try r.u16()
        error = ATTErrorCode(rawValue: try r.u8())
        try r.expectEnd()
    }

    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(requestOpcode.rawValue)
        sink.append(u16: handle)
        sink.append(error.rawValue)
    }
}

/// ATT_EXCHANGE_MTU_REQ (Part F 3.4.2.1): the client's receive MTU.
public struct ATTExchangeMTURequest: ATTPDU, Equatable, Sendable {
    public static let opcode = ATTOpcode.exchangeMTURequest
    public var clientRxMTU: UInt16
    public init(clientRxMTU: UInt16) { self.clientRxMTU = clientRxMTU }
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, exactly: 3)
        try r.expectATTOpcode(Self.opcode)
        clientRxMTU = try r.u16()
        try r.expectEnd()
    }
    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(u16: clientRxMTU)
    }
}

/// ATT_EXCHANGE_MTU_RSP (Part F 3.4.2.2): the server's receive MTU.
public struct ATTExchangeMTUResponse: ATTPDU, Equatable, Sendable {
    public static let opcode = ATTOpcode.exchangeMTUResponse
    public var serverRxMTU: UInt16
    public init(serverRxMTU: UInt16) { self.serverRxMTU = serverRxMTU }
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, exactly: 3)
        try r.expectATTOpcode(Self.opcode)
        serverRxMTU = try r.u16()
        try r.expectEnd()
    }
    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(u16: serverRxMTU)
    }
}

/// ATT_FIND_INFORMATION_REQ (Part F 3.4.3.1): handles and types in a range.
public struct ATTFindInformationRequest: ATTPDU, Equatable, Sendable {
    public static let opcode = ATTOpcode.findInformationRequest
    public var startingHandle: UInt16
    public var endingHandle: UInt16
    public init(startingHandle: UInt16, endingHandle: UInt16) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
    }
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, exactly: 5)
        try r.expectATTOpcode(Self.opcode)
        startingHandle = try r.u16()
        endingHandle = try r.u16()
        try r.expectEnd()
    }
    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(u16: startingHandle)
        sink.append(u16: endingHandle)
    }
}

/// ATT_READ_BY_TYPE_REQ (Part F 3.4.4.1): values of attributes of one type in a range.
public struct ATTReadByTypeRequest: ATTPDU, Equatable, Sendable {
    public static let opcode = ATTOpcode.readByTypeRequest
    public var startingHandle: UInt16
    public var endingHandle: UInt16
    /// 16- or 128-bit; written in the size it carries (`wireSize`).
    public var attributeType: BluetoothUUID
    public init(startingHandle: UInt16, endingHandle: UInt16, attributeType: BluetoothUUID) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.attributeType = attributeType
    }
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, atLeast: 5)
        try r.expectATTOpcode(Self.opcode)
        startingHandle = try r.u16()
        endingHandle = try r.u16()
        attributeType = try r.attUUIDRest()
    }
    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(u16: startingHandle)
        sink.append(u16: endingHandle)
        attributeType.write(to: &sink, size: attributeType.wireSize == 4 ? 16 : attributeType.wireSize)
    }
}

/// ATT_READ_BY_GROUP_TYPE_REQ (Part F 3.4.4.9): grouping attributes (services) in a range.
public struct ATTReadByGroupTypeRequest: ATTPDU, Equatable, Sendable {
    public static let opcode = ATTOpcode.readByGroupTypeRequest
    public var startingHandle: UInt16
    public var endingHandle: UInt16
    public var attributeGroupType: BluetoothUUID
    public init(startingHandle: UInt16, endingHandle: UInt16, attributeGroupType: BluetoothUUID) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.attributeGroupType = attributeGroupType
    }
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, atLeast: 5)
        try r.expectATTOpcode(Self.opcode)
        startingHandle = try r.u16()
        endingHandle = try r.u16()
        attributeGroupType = try r.attUUIDRest()
    }
    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(u16: startingHandle)
        sink.append(u16: endingHandle)
        attributeGroupType.write(to: &sink, size: attributeGroupType.wireSize == 4 ? 16 : attributeGroupType.wireSize)
    }
}

/// ATT_READ_REQ (Part F 3.4.4.3).
public struct ATTReadRequest: ATTPDU, Equatable, Sendable {
    public static let opcode = ATTOpcode.readRequest
    public var handle: UInt16
    public init(handle: UInt16) { self.handle = handle }
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, exactly: 3)
        try r.expectATTOpcode(Self.opcode)
        handle = try r.u16()
        try r.expectEnd()
    }
    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(u16: handle)
    }
}

/// ATT_READ_BLOB_REQ (Part F 3.4.4.5): part of a long value from `offset`.
public struct ATTReadBlobRequest: ATTPDU, Equatable, Sendable {
    public static let opcode = ATTOpcode.readBlobRequest
    public var handle: UInt16
    public var offset: UInt16
    public init(handle: UInt16, offset: UInt16) {
        self.handle = handle
        self.offset = offset
    }
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, exactly: 5)
        try r.expectATTOpcode(Self.opcode)
        handle = try r.u16()
        offset = try r.u16()
        try r.expectEnd()
    }
    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(u16: handle)
        sink.append(u16: offset)
    }
}

/// ATT_WRITE_RSP (Part F 3.4.5.2): no parameters.
public struct ATTWriteResponse: ATTPDU, Equatable, Sendable {
    public static let opcode = ATTOpcode.writeResponse
    public init() {}
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, exactly: 1)
        try r.expectATTOpcode(Self.opcode)
        try r.expectEnd()
    }
    public func write<S: ByteSink>(to sink: inout S) { sink.append(Self.opcode.rawValue) }
}

/// ATT_EXECUTE_WRITE_REQ (Part F 3.4.6.3): commit or cancel the prepare queue.
public struct ATTExecuteWriteRequest: ATTPDU, Equatable, Sendable {
    public static let opcode = ATTOpcode.executeWriteRequest
    /// Flags octet: 0x00 cancels all prepared writes, 0x01 writes them; others are reserved.
    public enum Flags: UInt8, Sendable { case cancel = 0x00, write = 0x01 }
    public var flags: Flags
    public init(flags: Flags) { self.flags = flags }
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, exactly: 2)
        try r.expectATTOpcode(Self.opcode)
        let raw = try r.u8()
        guard let f = Flags(rawValue: raw) else { throw .invalidValue(field: "Execute Write flags", value: Int(raw)) }
        flags = f
        try r.expectEnd()
    }
    public func write<S: ByteSink>(to sink: inout S) {
        sink.append(Self.opcode.rawValue)
        sink.append(flags.rawValue)
    }
}

/// ATT_EXECUTE_WRITE_RSP (Part F 3.4.6.4): no parameters.
public struct ATTExecuteWriteResponse: ATTPDU, Equatable, Sendable {
    public static let opcode = ATTOpcode.executeWriteResponse
    public init() {}
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, exactly: 1)
        try r.expectATTOpcode(Self.opcode)
        try r.expectEnd()
    }
    public func write<S: ByteSink>(to sink: inout S) { sink.append(Self.opcode.rawValue) }
}

/// ATT_HANDLE_VALUE_CFM (Part F 3.4.7.3): the client's acknowledgement of an indication.
public struct ATTHandleValueConfirmation: ATTPDU, Equatable, Sendable {
    public static let opcode = ATTOpcode.handleValueConfirmation
    public init() {}
    public init(_ pdu: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(pdu, exactly: 1)
        try r.expectATTOpcode(Self.opcode)
        try r.expectEnd()
    }
    public func write<S: ByteSink>(to sink: inout S) { sink.append(Self.opcode.rawValue) }
}
