import BluetoothHost

/// The next GATT operation the central procedure wants on its link. `HeraldSensor` turns each into a
/// GATT client procedure (Core 5.4 Vol 3 Part G 4); tests feed the results back by hand.
public enum HeraldGATTStep: Sendable, Equatable {
    /// Exchange MTU (Part G 4.3.1), so the payload usually fits one read.
    case exchangeMTU
    /// Discover All Primary Services (Part G 4.4.1): finds either Herald service UUID in one walk.
    case discoverServices
    /// Discover All Characteristics of the Herald service (Part G 4.6.1).
    case discoverCharacteristics(start: UInt16, end: UInt16)
    /// Read Long Characteristic Values of the payload characteristic (Part G 4.8.3).
    case readPayload(handle: UInt16)
    /// Write Characteristic Value (Part G 4.9.3): bytes `offset..<offset+length` of the message the
    /// owner loaded (it keeps the bytes; the procedure keeps only how far it got).
    case writeSignal(handle: UInt16, offset: Int, length: Int)
    /// A write is next: the owner loads its message with `load(length:)` or drops it with `skip()`.
    case needMessage(HeraldSignalWriteKind)
    /// Nothing more: disconnect now (connections close as soon as the work is done).
    case done(HeraldProcedureResult)
}

/// The signal writes a central makes, in the order it makes them: immediate send goes first.
public enum HeraldSignalWriteKind: Sendable, Equatable {
    case immediateSend
    case payloadSharing
}

public enum HeraldProcedureResult: Sendable, Equatable {
    /// Everything asked was done.
    case completed
    /// The peer has no Herald service (or no payload characteristic in it).
    case noHeraldService
    /// A GATT procedure failed or a response was unusable.
    case failed
}

/// One central connection's Herald work as a sans-I/O state machine: discover the Herald service and
/// its characteristics, then immediate send (if queued), read the payload (if wanted), share
/// payloads (if the peer is iOS and due), each write cut into fragments as `SignalFragmenter` does.
public struct HeraldCentralProcedure {
    enum Phase: Equatable {
        case idle, exchangingMTU, discoveringServices, discoveringCharacteristics, reading, awaitingMessage, writing, finished
    }

    var phase: Phase = .idle
    public internal(set) var mtu = 23
    public internal(set) var serviceRange: (start: UInt16, end: UInt16)?
    public internal(set) var payloadHandle: UInt16?
    public internal(set) var signalHandle: UInt16?
    public internal(set) var os: HeraldDeviceOS = .unknown
    /// Work still to do on this link.
    public var wantsImmediateSend: Bool
    public var wantsPayload: Bool
    public var wantsSharing: Bool
    /// The long read's value so far.
    public internal(set) var payload = PayloadBytes()
    public internal(set) var payloadComplete = false
    var readFailed = false
    /// Length of the signal message being written (the owner holds its bytes) and how far.
    public internal(set) var messageLength = 0
    var writeKind: HeraldSignalWriteKind = .immediateSend
    var writeOffset = 0
    var lastFragment = 0
    public internal(set) var result: HeraldProcedureResult?
    /// Writes that reached the peer whole (each Write Response received).
    public internal(set) var immediateSendWritten = false
    public internal(set) var sharingWritten = false

    public init(wantsImmediateSend: Bool, wantsPayload: Bool, wantsSharing: Bool) {
        self.wantsImmediateSend = wantsImmediateSend
        self.wantsPayload = wantsPayload
        self.wantsSharing = wantsSharing
    }

    /// Bytes per signal write: a Write Request carries ATT_MTU-3 octets (Part F 3.4.5.1); at least
    /// `SignalFragmenter.defaultFragmentSize` (20).
    public var fragmentSize: Int { max(SignalFragmenter.defaultFragmentSize, mtu - 3) }

    /// The longest signal message this peer accepts: one Write Request for iOS (see `load`), the
    /// largest message otherwise (written in `fragmentSize` pieces, as the Android reference
    /// peripheral reassembles).
    public var outgoingLimit: Int { os == .ios ? fragmentSize : Int.max }

    public var isFinished: Bool { phase == .finished }

    public mutating func start() -> HeraldGATTStep {
        phase = .exchangingMTU
        return .exchangeMTU
    }

    // MARK: Results from the GATT client

    public mutating func didExchangeMTU(_ mtu: Int) { self.mtu = max(23, mtu) }

    public mutating func didDiscover(service uuid: BluetoothUUID, start: UInt16, end: UInt16) {
        guard phase == .discoveringServices, serviceRange == nil, HeraldIdentifiers.isHeraldService(uuid) else { return }
        serviceRange = (start, end)
    }

    public mutating func didDiscover(characteristic uuid: BluetoothUUID, valueHandle: UInt16) {
        guard phase == .discoveringCharacteristics else { return }
        if uuid == HeraldIdentifiers.payloadCharacteristicUUID {
            payloadHandle = valueHandle
        } else if uuid == HeraldIdentifiers.iosSignalCharacteristicUUID {
            signalHandle = valueHandle
            os = .ios
        } else if uuid == HeraldIdentifiers.androidSignalCharacteristicUUID, os != .ios {
            signalHandle = valueHandle
            os = .android
        }
    }

    /// One chunk of the payload read at `offset`. Chunks must be consecutive; a value longer than the
    /// payload capacity fails the procedure at completion.
    public mutating func didRead(offset: Int, value: Span<UInt8>) {
        guard phase == .reading, offset == payload.count, !readFailed else { readFailed = true; return }
        payload.append(contentsOf: value)
    }

    /// The outstanding GATT procedure ended (`succeeded` false for any error). Returns the next step.
    public mutating func didComplete(succeeded: Bool) -> HeraldGATTStep {
        switch phase {
        case .idle, .finished:
            return .done(result ?? .failed)
        case .exchangingMTU:
            // A peer that refuses Exchange MTU still works at 23 (Part G 4.3.1).
            phase = .discoveringServices
            return .discoverServices
        case .discoveringServices:
            guard succeeded else { return finish(.failed) }
            guard let range = serviceRange else { return finish(.noHeraldService) }
            phase = .discoveringCharacteristics
            return .discoverCharacteristics(start: range.start, end: range.end)
        case .discoveringCharacteristics:
            guard succeeded else { return finish(.failed) }
            guard payloadHandle != nil else { return finish(.noHeraldService) }
            if signalHandle == nil { wantsImmediateSend = false; wantsSharing = false }
            if os != .ios { wantsSharing = false }
            return next()
        case .reading:
            guard succeeded, !readFailed, !payload.overflowed, payload.count > 0 else { return finish(.failed) }
            payloadComplete = true
            wantsPayload = false
            return next()
        case .awaitingMessage:
            return .needMessage(writeKind)
        case .writing:
            guard succeeded else { return finish(.failed) }
            writeOffset += lastFragment
            return next()
        }
    }

    /// The owner's answer to `.needMessage`: it holds an encoded signal message of `length` octets
    /// to write, and keeps it unchanged until the procedure leaves the writing phase.
    ///
    /// An iOS peer gets each message in one Write Request: the reference iOS peripheral
    /// (herald-for-ios `BLETransmitter.peripheralManager(_:didReceiveWrite:)`) decodes every request's
    /// value on its own and refuses one whose length is not the message's declared length, so the
    /// fragments of a longer message would each be refused. A message for an iOS peer longer than
    /// `fragmentSize` is dropped (`outgoingLimit` keeps the ones the central builds within it).
    public mutating func load(length: Int) -> HeraldGATTStep {
        guard phase == .awaitingMessage else { return outOfTurn() }
        guard length > 0, length <= outgoingLimit else { return skip() }
        messageLength = length
        writeOffset = 0
        lastFragment = 0
        phase = .writing
        return next()
    }

    /// The procedure is writing a message the owner holds.
    public var isWriting: Bool { phase == .writing }

    /// Drops the write `.needMessage` asked for (nothing to send).
    public mutating func skip() -> HeraldGATTStep {
        guard phase == .awaitingMessage else { return outOfTurn() }
        clearWant(writeKind)
        messageLength = 0
        return next()
    }

    /// A message offered when none was asked for: the owner lost track, so the link's work ends.
    mutating func outOfTurn() -> HeraldGATTStep {
        phase == .finished ? .done(result ?? .failed) : finish(.failed)
    }

    mutating func clearWant(_ kind: HeraldSignalWriteKind) {
        if kind == .immediateSend { wantsImmediateSend = false } else { wantsSharing = false }
    }

    /// Immediate send, then the payload read, then sharing.
    mutating func next() -> HeraldGATTStep {
        if phase == .writing, writeOffset < messageLength, let handle = signalHandle {
            lastFragment = min(fragmentSize, messageLength - writeOffset)
            return .writeSignal(handle: handle, offset: writeOffset, length: lastFragment)
        }
        if phase == .writing {
            if writeKind == .immediateSend { immediateSendWritten = true } else { sharingWritten = true }
            clearWant(writeKind)
            messageLength = 0
            writeOffset = 0
            phase = .awaitingMessage
        }
        if wantsImmediateSend { return want(.immediateSend) }
        if wantsPayload, let handle = payloadHandle {
            phase = .reading
            payload.removeAll()
            readFailed = false
            return .readPayload(handle: handle)
        }
        if wantsSharing { return want(.payloadSharing) }
        return finish(.completed)
    }

    mutating func want(_ kind: HeraldSignalWriteKind) -> HeraldGATTStep {
        writeKind = kind
        phase = .awaitingMessage
        return .needMessage(kind)
    }

    mutating func finish(_ r: HeraldProcedureResult) -> HeraldGATTStep {
        phase = .finished
        result = r
        return .done(r)
    }
}
