// LE Meta subevents about connections (Core 5.4 Vol 4 Part E 7.7.65.x). Each parses the
// subevent's parameters (after the subevent code) or a whole `HCILEMetaEvent`.

/// Role of the local device on a connection.
public enum HCIRole: UInt8, Sendable, Equatable {
    case central = 0x00
    case peripheral = 0x01
}

/// Reads a peer address type. A failed connection's fields are not meaningful (Core 5.4 Vol 4
/// Part E 7.7.65.1), so an unknown type is only an error when the status is success.
@inline(__always)
private func readPeer(_ r: inout ByteReader, status: HCIStatus) throws(DecodeError) -> DeviceAddress {
    let rawType = try r.u8()
    let address = try BDAddress.read(&r)
    guard let type = AddressType(rawValue: rawType), type != .anonymous else {
        guard status == .success else { return DeviceAddress(type: .publicDevice, address: address) }
        throw .invalidValue(field: "Peer_Address_Type", value: Int(rawType))
    }
    return DeviceAddress(type: type, address: address)
}

@inline(__always)
private func readRole(_ r: inout ByteReader, status: HCIStatus) throws(DecodeError) -> HCIRole {
    let raw = try r.u8()
    guard let role = HCIRole(rawValue: raw) else {
        guard status == .success else { return .central }
        throw .invalidValue(field: "Role", value: Int(raw))
    }
    return role
}

/// LE Connection Complete (Core 5.4 Vol 4 Part E 7.7.65.1). Interval in 1.25 ms, supervision
/// timeout in 10 ms.
public struct HCILEConnectionCompleteEvent: Equatable, Sendable {
    public static let subevent = HCILESubeventCode.connectionComplete
    public var status: HCIStatus
    public var handle: UInt16
    public var role: HCIRole
    public var peer: DeviceAddress
    public var connectionInterval: UInt16
    public var peripheralLatency: UInt16
    public var supervisionTimeout: UInt16
    public var centralClockAccuracy: UInt8

    public init(
        status: HCIStatus, handle: UInt16, role: HCIRole, peer: DeviceAddress, connectionInterval: UInt16,
        peripheralLatency: UInt16, supervisionTimeout: UInt16, centralClockAccuracy: UInt8
    ) {
        self.status = status
        self.handle = handle
        self.role = role
        self.peer = peer
        self.connectionInterval = connectionInterval
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
        self.centralClockAccuracy = centralClockAccuracy
    }

    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(parameters, exactly: 18)
        status = HCIStatus(rawValue: try r.u8())
        handle = try r.u16() & 0x0FFF
        role = try readRole(&r, status: status)
        peer = try readPeer(&r, status: status)
        connectionInterval = try r.u16()
        peripheralLatency = try r.u16()
        supervisionTimeout = try r.u16()
        centralClockAccuracy = try r.u8()
        try r.expectEnd()
    }

    public init(_ meta: HCILEMetaEvent) throws(DecodeError) {
        try expectSubevent(meta.subevent, Self.subevent)
        try self.init(parsing: meta.parameters)
    }

    /// Any of the three connection-complete subevents (this one, and LE Enhanced Connection
    /// Complete v1 and v2, 7.7.65.10) as this event's fields, with the layout checks of each: the
    /// enhanced ones insert the two resolvable private addresses after the peer's, and v2 appends the
    /// advertising and sync handles. The same as `HCILEEnhancedConnectionCompleteEvent(meta).basic`
    /// for those; one reader for all three instead of one inlined per layout where a host handles
    /// both (a firmware image carried each).
    public init(anyConnectionComplete meta: HCILEMetaEvent) throws(DecodeError) {
        let privateAddresses: Int, trailer: Int
        switch meta.subevent {
        case HCILESubeventCode.connectionComplete: (privateAddresses, trailer) = (0, 0)
        case HCILESubeventCode.enhancedConnectionCompleteV1: (privateAddresses, trailer) = (12, 0)
        case HCILESubeventCode.enhancedConnectionCompleteV2: (privateAddresses, trailer) = (12, 3)
        default: throw .unexpectedCode(field: "LE subevent code", value: Int(meta.subevent))
        }
        var r = try ByteReader(meta.parameters, exactly: 18 + privateAddresses + trailer)
        status = HCIStatus(rawValue: try r.u8())
        handle = try r.u16() & 0x0FFF
        role = try readRole(&r, status: status)
        peer = try readPeer(&r, status: status)
        try r.skip(privateAddresses)
        connectionInterval = try r.u16()
        peripheralLatency = try r.u16()
        supervisionTimeout = try r.u16()
        centralClockAccuracy = try r.u8()
        try r.skip(trailer)
        try r.expectEnd()
    }
}

/// LE Enhanced Connection Complete v1 (0x0A) and v2 (0x29) (Core 5.4 Vol 4 Part E 7.7.65.10).
/// v2 appends the advertising set and periodic sync handles; for v1 they are nil.
public struct HCILEEnhancedConnectionCompleteEvent: Equatable, Sendable {
    public var status: HCIStatus
    public var handle: UInt16
    public var role: HCIRole
    /// Identity address if the controller resolved the peer, else the address seen on air.
    public var peer: DeviceAddress
    /// Zero unless the controller used a resolvable private address.
    public var localResolvablePrivateAddress: BDAddress
    public var peerResolvablePrivateAddress: BDAddress
    public var connectionInterval: UInt16
    public var peripheralLatency: UInt16
    public var supervisionTimeout: UInt16
    public var centralClockAccuracy: UInt8
    /// v2 only: the advertising set that led to this connection (0xFF if none).
    public var advertisingHandle: UInt8?
    /// v2 only: the periodic advertising sync (0xFFFF if none).
    public var syncHandle: UInt16?

    /// `subevent` says which layout: 0x0A (v1, 30 octets) or 0x29 (v2, 33 octets).
    public init(parsing parameters: Span<UInt8>, subevent: UInt8) throws(DecodeError) {
        let v2: Bool
        switch subevent {
        case HCILESubeventCode.enhancedConnectionCompleteV1: v2 = false
        case HCILESubeventCode.enhancedConnectionCompleteV2: v2 = true
        default: throw .unexpectedCode(field: "LE subevent code", value: Int(subevent))
        }
        var r = try ByteReader(parameters, exactly: v2 ? 33 : 30)
        status = HCIStatus(rawValue: try r.u8())
        handle = try r.u16() & 0x0FFF
        role = try readRole(&r, status: status)
        peer = try readPeer(&r, status: status)
        localResolvablePrivateAddress = try BDAddress.read(&r)
        peerResolvablePrivateAddress = try BDAddress.read(&r)
        connectionInterval = try r.u16()
        peripheralLatency = try r.u16()
        supervisionTimeout = try r.u16()
        centralClockAccuracy = try r.u8()
        if v2 {
            advertisingHandle = try r.u8()
            syncHandle = try r.u16()
        } else {
            advertisingHandle = nil
            syncHandle = nil
        }
        try r.expectEnd()
    }

    public init(_ meta: HCILEMetaEvent) throws(DecodeError) {
        try self.init(parsing: meta.parameters, subevent: meta.subevent)
    }

    /// The fields the legacy event carries, so a host can handle both the same way.
    public var basic: HCILEConnectionCompleteEvent {
        HCILEConnectionCompleteEvent(
            status: status, handle: handle, role: role, peer: peer, connectionInterval: connectionInterval,
            peripheralLatency: peripheralLatency, supervisionTimeout: supervisionTimeout,
            centralClockAccuracy: centralClockAccuracy)
    }
}

/// LE Connection Update Complete (Core 5.4 Vol 4 Part E 7.7.65.3).
public struct HCILEConnectionUpdateCompleteEvent: Equatable, Sendable {
    public static let subevent = HCILESubeventCode.connectionUpdateComplete
    public var status: HCIStatus
    public var handle: UInt16
    public var connectionInterval: UInt16
    public var peripheralLatency: UInt16
    public var supervisionTimeout: UInt16

    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(parameters, exactly: 9)
        status = HCIStatus(rawValue: try r.u8())
        handle = try r.u16() & 0x0FFF
        connectionInterval = try r.u16()
        peripheralLatency = try r.u16()
        supervisionTimeout = try r.u16()
        try r.expectEnd()
    }

    public init(_ meta: HCILEMetaEvent) throws(DecodeError) {
        try expectSubevent(meta.subevent, Self.subevent)
        try self.init(parsing: meta.parameters)
    }
}

/// LE Remote Connection Parameter Request (Core 5.4 Vol 4 Part E 7.7.65.6): the peer started the
/// link layer's Connection Parameters Request procedure (Vol 6 Part B 5.1.7) and the controller
/// waits for the host's reply or negative reply. Unanswered, the procedure times out after 40 s
/// and the link drops (Vol 6 Part B 5.2).
public struct HCILERemoteConnectionParameterRequestEvent: Equatable, Sendable {
    public static let subevent = HCILESubeventCode.remoteConnectionParameterRequest
    public var handle: UInt16
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var maxLatency: UInt16
    public var timeout: UInt16

    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(parameters, exactly: 10)
        handle = try r.u16() & 0x0FFF
        intervalMin = try r.u16()
        intervalMax = try r.u16()
        maxLatency = try r.u16()
        timeout = try r.u16()
        try r.expectEnd()
    }

    public init(_ meta: HCILEMetaEvent) throws(DecodeError) {
        try expectSubevent(meta.subevent, Self.subevent)
        try self.init(parsing: meta.parameters)
    }

    /// Whether the request is one the Core allows (Vol 4 Part E 7.8.31 ranges, the same as the
    /// L2CAP request's, Vol 3 Part A 4.20): interval 7.5 ms…4 s with min ≤ max, latency ≤ 499,
    /// timeout 100 ms…32 s and longer than (1 + latency) × interval max × 2.
    public var isValid: Bool {
        guard (0x0006...0x0C80).contains(intervalMin), (0x0006...0x0C80).contains(intervalMax),
              intervalMin <= intervalMax, maxLatency <= 0x01F3, (0x000A...0x0C80).contains(timeout) else { return false }
        // timeout (10 ms units) × 10 > (1 + latency) × intervalMax (1.25 ms units) × 1.25 × 2
        return UInt32(timeout) &* 4 > (1 &+ UInt32(maxLatency)) &* UInt32(intervalMax)
    }
}

/// LE Data Length Change (Core 5.4 Vol 4 Part E 7.7.65.7): the PDU sizes now in use on a link.
public struct HCILEDataLengthChangeEvent: Equatable, Sendable {
    public static let subevent = HCILESubeventCode.dataLengthChange
    public var handle: UInt16
    public var maxTxOctets: UInt16
    public var maxTxTime: UInt16
    public var maxRxOctets: UInt16
    public var maxRxTime: UInt16

    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(parameters, exactly: 10)
        handle = try r.u16() & 0x0FFF
        maxTxOctets = try r.u16()
        maxTxTime = try r.u16()
        maxRxOctets = try r.u16()
        maxRxTime = try r.u16()
        try r.expectEnd()
    }

    public init(_ meta: HCILEMetaEvent) throws(DecodeError) {
        try expectSubevent(meta.subevent, Self.subevent)
        try self.init(parsing: meta.parameters)
    }
}

/// LE Advertising Set Terminated (Core 5.4 Vol 4 Part E 7.7.65.18): an extended advertising set
/// stopped, e.g. because a central connected to it (Bumble sends this with extended advertising).
public struct HCILEAdvertisingSetTerminatedEvent: Equatable, Sendable {
    public static let subevent = HCILESubeventCode.advertisingSetTerminated
    public var status: HCIStatus
    public var advertisingHandle: UInt8
    /// The connection that ended advertising, when status is success.
    public var connectionHandle: UInt16
    public var numCompletedExtendedAdvertisingEvents: UInt8

    public init(parsing parameters: Span<UInt8>) throws(DecodeError) {
        var r = try ByteReader(parameters, exactly: 5)
        status = HCIStatus(rawValue: try r.u8())
        advertisingHandle = try r.u8()
        connectionHandle = try r.u16() & 0x0FFF
        numCompletedExtendedAdvertisingEvents = try r.u8()
        try r.expectEnd()
    }

    public init(_ meta: HCILEMetaEvent) throws(DecodeError) {
        try expectSubevent(meta.subevent, Self.subevent)
        try self.init(parsing: meta.parameters)
    }
}
