// Signalling commands about connection-oriented channels. This host opens none, so it only needs to
// parse the requests and refuse them correctly.

/// LE Credit Based Connection Request (Core 5.4 Vol 3 Part A 4.22): SPSM, source CID, MTU, MPS,
/// initial credits (u16 each).
public struct L2CAPLECreditBasedConnectionRequest: Sendable, Equatable {
    public var identifier: UInt8
    public var spsm: UInt16
    public var sourceCID: UInt16
    public var mtu: UInt16
    public var mps: UInt16
    public var initialCredits: UInt16

    public init(identifier: UInt8, spsm: UInt16, sourceCID: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16) {
        self.identifier = identifier
        self.spsm = spsm
        self.sourceCID = sourceCID
        self.mtu = mtu
        self.mps = mps
        self.initialCredits = initialCredits
    }

    public init(parsing command: borrowing L2CAPSignalingCommand) throws(DecodeError) {
        guard command.code == .leCreditBasedConnectionRequest else {
            throw .unexpectedCode(field: "signalling code", value: Int(command.code.rawValue))
        }
        var r = try ByteReader(command.data, exactly: 10)
        identifier = command.identifier
        spsm = try r.u16()
        sourceCID = try r.u16()
        mtu = try r.u16()
        mps = try r.u16()
        initialCredits = try r.u16()
        try r.expectEnd()
    }

    public func write<S: ByteSink>(to sink: inout S) {
        L2CAPSignalingCommand.writeHeader(code: .leCreditBasedConnectionRequest, identifier: identifier,
                                          dataLength: 10, to: &sink)
        sink.append(u16: spsm)
        sink.append(u16: sourceCID)
        sink.append(u16: mtu)
        sink.append(u16: mps)
        sink.append(u16: initialCredits)
    }
}

/// Result codes shared by the LE and enhanced credit-based connection responses
/// (Core 5.4 Vol 3 Part A 4.23, 4.26).
public struct L2CAPCreditBasedConnectionResult: RawRepresentable, Equatable, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public static let successful = L2CAPCreditBasedConnectionResult(rawValue: 0x0000)
    /// Connection refused – SPSM not supported.
    public static let spsmNotSupported = L2CAPCreditBasedConnectionResult(rawValue: 0x0002)
    /// Connection refused – no resources available.
    public static let noResources = L2CAPCreditBasedConnectionResult(rawValue: 0x0004)
}

/// LE Credit Based Connection Response (Core 5.4 Vol 3 Part A 4.23): destination CID, MTU, MPS,
/// initial credits, result. On refusal the first four are sent as zero (the peer ignores them).
public struct L2CAPLECreditBasedConnectionResponse: Sendable, Equatable {
    public var identifier: UInt8
    public var destinationCID: UInt16
    public var mtu: UInt16
    public var mps: UInt16
    public var initialCredits: UInt16
    public var result: L2CAPCreditBasedConnectionResult

    public init(identifier: UInt8, destinationCID: UInt16 = 0, mtu: UInt16 = 0, mps: UInt16 = 0,
                initialCredits: UInt16 = 0, result: L2CAPCreditBasedConnectionResult) {
        self.identifier = identifier
        self.destinationCID = destinationCID
        self.mtu = mtu
        self.mps = mps
        self.initialCredits = initialCredits
        self.result = result
    }

    public init(parsing command: borrowing L2CAPSignalingCommand) throws(DecodeError) {
        guard command.code == .leCreditBasedConnectionResponse else {
            throw .unexpectedCode(field: "signalling code", value: Int(command.code.rawValue))
        }
        var r = try ByteReader(command.data, exactly: 10)
        identifier = command.identifier
        destinationCID = try r.u16()
        mtu = try r.u16()
        mps = try r.u16()
        initialCredits = try r.u16()
        result = L2CAPCreditBasedConnectionResult(rawValue: try r.u16())
        try r.expectEnd()
    }

    public func write<S: ByteSink>(to sink: inout S) {
        L2CAPSignalingCommand.writeHeader(code: .leCreditBasedConnectionResponse, identifier: identifier,
                                          dataLength: 10, to: &sink)
        sink.append(u16: destinationCID)
        sink.append(u16: mtu)
        sink.append(u16: mps)
        sink.append(u16: initialCredits)
        sink.append(u16: result.rawValue)
    }
}

/// Credit Based Connection Request, the enhanced variant (Core 5.4 Vol 3 Part A 4.25): SPSM, MTU,
/// MPS, initial credits, then 1…5 source CIDs.
public struct L2CAPCreditBasedConnectionRequest: Sendable, Equatable {
    public static let maxChannels = 5
    public var identifier: UInt8
    public var spsm: UInt16
    public var mtu: UInt16
    public var mps: UInt16
    public var initialCredits: UInt16
    public var sourceCIDs: InlineArray<5, UInt16>
    public var channelCount: Int

    public init(parsing command: borrowing L2CAPSignalingCommand) throws(DecodeError) {
        guard command.code == .creditBasedConnectionRequest else {
            throw .unexpectedCode(field: "signalling code", value: Int(command.code.rawValue))
        }
        var r = try ByteReader(command.data, atLeast: 8)
        identifier = command.identifier
        spsm = try r.u16()
        mtu = try r.u16()
        mps = try r.u16()
        initialCredits = try r.u16()
        let cidBytes = r.remaining
        guard cidBytes % 2 == 0, cidBytes >= 2, cidBytes <= 2 * Self.maxChannels else {
            throw .badLength(field: "source CIDs", declared: cidBytes, limit: 2 * Self.maxChannels)
        }
        channelCount = cidBytes / 2
        sourceCIDs = InlineArray(repeating: 0)
        for i in 0..<channelCount { sourceCIDs[i] = try r.u16() }
    }

    public static func == (a: Self, b: Self) -> Bool {
        guard a.identifier == b.identifier, a.spsm == b.spsm, a.mtu == b.mtu, a.mps == b.mps,
              a.initialCredits == b.initialCredits, a.channelCount == b.channelCount else { return false }
        for i in 0..<a.channelCount where a.sourceCIDs[i] != b.sourceCIDs[i] { return false }
        return true
    }
}

/// Credit Based Connection Response (Core 5.4 Vol 3 Part A 4.26): MTU, MPS, initial credits,
/// result, then one destination CID per requested channel (0x0000 for each refused one).
/// Only the all-refused form is written by this host.
public struct L2CAPCreditBasedConnectionResponse: Sendable, Equatable {
    public var identifier: UInt8
    public var result: L2CAPCreditBasedConnectionResult
    public var channelCount: Int

    public init(identifier: UInt8, result: L2CAPCreditBasedConnectionResult, channelCount: Int) {
        self.identifier = identifier
        self.result = result
        self.channelCount = min(max(channelCount, 1), L2CAPCreditBasedConnectionRequest.maxChannels)
    }

    public func write<S: ByteSink>(to sink: inout S) {
        L2CAPSignalingCommand.writeHeader(code: .creditBasedConnectionResponse, identifier: identifier,
                                          dataLength: 8 + 2 * channelCount, to: &sink)
        sink.append(u16: 0)  // MTU
        sink.append(u16: 0)  // MPS
        sink.append(u16: 0)  // initial credits
        sink.append(u16: result.rawValue)
        for _ in 0..<channelCount { sink.append(u16: 0) }
    }
}

/// Disconnection Request (Core 5.4 Vol 3 Part A 4.6): destination CID, source CID (from the
/// sender's point of view, so the destination is our endpoint).
public struct L2CAPDisconnectionRequest: Sendable, Equatable {
    public var identifier: UInt8
    public var destinationCID: UInt16
    public var sourceCID: UInt16

    public init(identifier: UInt8, destinationCID: UInt16, sourceCID: UInt16) {
        self.identifier = identifier
        self.destinationCID = destinationCID
        self.sourceCID = sourceCID
    }

    public init(parsing command: borrowing L2CAPSignalingCommand) throws(DecodeError) {
        guard command.code == .disconnectionRequest else {
            throw .unexpectedCode(field: "signalling code", value: Int(command.code.rawValue))
        }
        var r = try ByteReader(command.data, exactly: 4)
        identifier = command.identifier
        destinationCID = try r.u16()
        sourceCID = try r.u16()
        try r.expectEnd()
    }

    public func write<S: ByteSink>(to sink: inout S) {
        L2CAPSignalingCommand.writeHeader(code: .disconnectionRequest, identifier: identifier, dataLength: 4, to: &sink)
        sink.append(u16: destinationCID)
        sink.append(u16: sourceCID)
    }
}
