import BluetoothHost

/// The next GATT operation the central procedure wants on its link. `HeraldCentral.startGATT` turns
/// each into a GATT client procedure (Core 5.4 Vol 3 Part G 4); tests feed the results back by hand.
public enum HeraldGATTStep: Sendable, Equatable {
    /// Exchange MTU (Part G 4.3.1), so the payload usually fits one read.
    case exchangeMTU
    /// Discover All Primary Services (Part G 4.4.1): finds either Herald service UUID in one walk.
    case discoverServices
    /// Discover All Characteristics of the Herald service (Part G 4.6.1).
    case discoverCharacteristics(start: UInt16, end: UInt16)
    /// Read Long Characteristic Values of the payload characteristic (Part G 4.8.3).
    case readPayload(handle: UInt16)
    /// Read Using Characteristic UUID of the payload characteristic (Part G 4.8.2): the payload in one
    /// round trip after the MTU exchange, without the discovery walk's five, when nothing has to be
    /// written before it.
    case readPayloadByUUID
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

/// A handle range of a discovered service.
public struct HeraldServiceRange: Sendable, Equatable {
    public var start: UInt16
    public var end: UInt16
}

/// A signal characteristic: its value handle and what its UUID says about the peer's platform
/// (Herald protocol specification: iOS apps expose 0eb0d5f2-…, everything else f617b813-…).
public struct HeraldSignalCharacteristic: Sendable, Equatable {
    public var handle: UInt16
    public var os: HeraldDeviceOS
}

/// The Herald characteristics a peer has, once discovery found its payload characteristic.
public struct HeraldPeerCharacteristics: Sendable, Equatable {
    public var payload: UInt16
    public var signal: HeraldSignalCharacteristic?
}

/// A signal message being written: its kind, where it goes, its length (the owner holds the bytes),
/// how far the writes got and the length of the write outstanding.
public struct HeraldSignalWrite: Sendable, Equatable {
    public var kind: HeraldSignalWriteKind
    public var handle: UInt16
    public var length: Int
    public var offset = 0
    public var fragment = 0
}

/// Where a central connection's Herald work is. Each phase carries what it has learnt, so a later
/// phase cannot run without it: no read without a payload handle, no write without a signal
/// characteristic and a message.
public enum HeraldCentralPhase: Sendable, Equatable {
    case idle
    case exchangingMTU
    /// Read Using Characteristic UUID of the payload; the value's handle once the first chunk came.
    case readingByUUID(handle: UInt16?, inOrder: Bool)
    /// Discover All Primary Services; the first Herald service found so far.
    case discoveringServices(found: HeraldServiceRange?)
    /// Discover All Characteristics in the Herald service; what was found so far.
    case discoveringCharacteristics(HeraldServiceRange, payload: UInt16?, signal: HeraldSignalCharacteristic?)
    /// Read Long of the payload; `inOrder` turns false at the first chunk that is not the next one.
    case reading(HeraldPeerCharacteristics, inOrder: Bool)
    /// The owner is asked for the message of `kind`.
    case awaitingMessage(HeraldPeerCharacteristics, HeraldSignalWriteKind)
    case writing(HeraldPeerCharacteristics, HeraldSignalWrite)
    case finished(HeraldProcedureResult)
}

/// One central connection's Herald work as a sans-I/O state machine (the connection lifecycle of the
/// reference apps' `BLEReceiver`): exchange MTU, discover the Herald service and its characteristics,
/// then immediate send (if queued), read the payload with Read/Read Blob (if wanted), share payloads
/// (if the peer is iOS and due); then the owner disconnects. With no immediate send queued, the
/// payload is read first, by its UUID, and the walk follows only if a write may be due (the signal
/// characteristic says which platform the peer is, and so whether it gets payload sharing): a
/// wearable reads its peers a discovery walk sooner. A peer whose server does not find it that way
/// gets the walk and the read by handle, as before. Results arrive either by hand
/// (`didDiscover`, `didRead`, `didComplete`) or from the link's `GATTClient`, whose delegate it is.
public struct HeraldCentralProcedure {
    public internal(set) var phase: HeraldCentralPhase = .idle
    public internal(set) var mtu = 23
    /// What the signal characteristic found says about the peer (kept after the procedure ends).
    public internal(set) var os: HeraldDeviceOS = .unknown
    /// Work still to do on this link.
    public var wantsImmediateSend: Bool
    public var wantsPayload: Bool
    public var wantsSharing: Bool
    /// The long read's value so far; whole once `payloadComplete`.
    public internal(set) var payload = PayloadBytes()
    public internal(set) var payloadComplete = false
    /// Writes that reached the peer whole (each Write Response received).
    public internal(set) var immediateSendWritten = false
    public internal(set) var sharingWritten = false
    /// Read the payload by its UUID before the walk when no immediate send goes first.
    public let readsPayloadFirst: Bool

    public init(wantsImmediateSend: Bool, wantsPayload: Bool, wantsSharing: Bool, readsPayloadFirst: Bool = false) {
        self.wantsImmediateSend = wantsImmediateSend
        self.wantsPayload = wantsPayload
        self.wantsSharing = wantsSharing
        self.readsPayloadFirst = readsPayloadFirst
    }

    /// Bytes per signal write: a Write Request carries ATT_MTU-3 octets (Part F 3.4.5.1); at least
    /// `SignalFragmenter.defaultFragmentSize` (20).
    public var fragmentSize: Int { max(SignalFragmenter.defaultFragmentSize, mtu &- 3) }  // mtu is at least 23

    /// The longest signal message this peer accepts: one Write Request for iOS (see `load`), the
    /// largest message otherwise (written in `fragmentSize` pieces, as the Android reference
    /// peripheral reassembles).
    public var outgoingLimit: Int { os == .ios ? fragmentSize : Int.max }

    public var isFinished: Bool { if case .finished = phase { true } else { false } }
    /// The procedure is writing a message the owner holds.
    public var isWriting: Bool { if case .writing = phase { true } else { false } }
    public var result: HeraldProcedureResult? { if case .finished(let r) = phase { r } else { nil } }

    /// What the phase asks of the owner: the GATT operation to start, a message, or the end.
    public var step: HeraldGATTStep {
        switch phase {
        case .idle: return .done(.failed)
        case .exchangingMTU: return .exchangeMTU
        case .readingByUUID: return .readPayloadByUUID
        case .discoveringServices: return .discoverServices
        case .discoveringCharacteristics(let range, _, _): return .discoverCharacteristics(start: range.start, end: range.end)
        case .reading(let peer, _): return .readPayload(handle: peer.payload)
        case .awaitingMessage(_, let kind): return .needMessage(kind)
        case .writing(_, let w): return .writeSignal(handle: w.handle, offset: w.offset, length: w.fragment)
        case .finished(let r): return .done(r)
        }
    }

    public mutating func start() -> HeraldGATTStep {
        phase = .exchangingMTU
        return .exchangeMTU
    }

    // MARK: Results of the outstanding GATT operation

    public mutating func didExchangeMTU(_ mtu: Int) { self.mtu = max(23, mtu) }

    public mutating func didDiscover(service uuid: BluetoothUUID, start: UInt16, end: UInt16) {
        guard case .discoveringServices(nil) = phase, HeraldIdentifiers.isHeraldService(uuid) else { return }
        phase = .discoveringServices(found: HeraldServiceRange(start: start, end: end))
    }

    public mutating func didDiscover(characteristic uuid: BluetoothUUID, valueHandle: UInt16) {
        guard case .discoveringCharacteristics(let range, var payload, var signal) = phase else { return }
        if uuid == HeraldIdentifiers.payloadCharacteristicUUID {
            payload = valueHandle
        } else if uuid == HeraldIdentifiers.iosSignalCharacteristicUUID {
            signal = HeraldSignalCharacteristic(handle: valueHandle, os: .ios)
        } else if uuid == HeraldIdentifiers.androidSignalCharacteristicUUID, signal?.os != .ios {
            signal = HeraldSignalCharacteristic(handle: valueHandle, os: .android)
        } else {
            return
        }
        if let s = signal { os = s.os }
        phase = .discoveringCharacteristics(range, payload: payload, signal: signal)
    }

    /// One chunk of the payload read at `offset` (from attribute `handle`, which a read by UUID
    /// learns from its first chunk). Chunks must be consecutive and of one attribute; a value longer
    /// than the payload capacity fails the procedure at completion.
    public mutating func didRead(offset: Int, value: Span<UInt8>, handle: UInt16 = 0) {
        switch phase {
        case .reading(let peer, true):
            guard offset == payload.count else { phase = .reading(peer, inOrder: false); return }
        case .readingByUUID(let known, true):
            guard offset == payload.count, known == nil || known == handle else {
                phase = .readingByUUID(handle: known, inOrder: false)
                return
            }
            phase = .readingByUUID(handle: handle, inOrder: true)
        default:
            return
        }
        payload.append(contentsOf: value)
    }

    /// The outstanding GATT operation ended (`succeeded` false for any error). Returns the next step.
    public mutating func didComplete(succeeded: Bool) -> HeraldGATTStep {
        switch phase {
        case .idle, .finished:
            return step
        case .exchangingMTU:
            // A peer that refuses Exchange MTU still works at 23 (Part G 4.3.1). Immediate send goes
            // first, so only without it is the payload read before the walk.
            if readsPayloadFirst, wantsPayload, !wantsImmediateSend {
                payload.removeAll()
                phase = .readingByUUID(handle: nil, inOrder: true)
            } else {
                phase = .discoveringServices(found: nil)
            }
        case .readingByUUID(let handle, let inOrder):
            guard succeeded, handle != nil, inOrder, !payload.overflowed, payload.count > 0 else {
                // Not found that way (or not whole): the walk decides whether the peer has the service,
                // and reads the payload by its handle.
                payload.removeAll()
                phase = .discoveringServices(found: nil)
                return step
            }
            payloadComplete = true
            wantsPayload = false
            guard wantsImmediateSend || wantsSharing else { return finish(.completed) }
            phase = .discoveringServices(found: nil)
        case .discoveringServices(let found):
            guard succeeded else { return finish(.failed) }
            guard let range = found else { return finish(.noHeraldService) }
            phase = .discoveringCharacteristics(range, payload: nil, signal: nil)
        case .discoveringCharacteristics(_, let payload, let signal):
            guard succeeded else { return finish(.failed) }
            guard let payload else { return finish(.noHeraldService) }
            if signal == nil { wantsImmediateSend = false; wantsSharing = false }
            if os != .ios { wantsSharing = false }
            return next(HeraldPeerCharacteristics(payload: payload, signal: signal))
        case .reading(let peer, let inOrder):
            guard succeeded, inOrder, !payload.overflowed, payload.count > 0 else { return finish(.failed) }
            payloadComplete = true
            wantsPayload = false
            return next(peer)
        case .awaitingMessage:
            break
        case .writing(let peer, var w):
            guard succeeded else { return finish(.failed) }
            w.offset += w.fragment
            return write(peer, w)
        }
        return step
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
        guard case .awaitingMessage(let peer, let kind) = phase else { return outOfTurn() }
        guard length > 0, length <= outgoingLimit, let signal = peer.signal else { return skip() }
        return write(peer, HeraldSignalWrite(kind: kind, handle: signal.handle, length: length))
    }

    /// Drops the write `.needMessage` asked for (nothing to send).
    public mutating func skip() -> HeraldGATTStep {
        guard case .awaitingMessage(let peer, let kind) = phase else { return outOfTurn() }
        clearWant(kind)
        return next(peer)
    }

    /// A message offered when none was asked for: the owner lost track, so the link's work ends.
    mutating func outOfTurn() -> HeraldGATTStep {
        isFinished ? step : finish(.failed)
    }

    mutating func clearWant(_ kind: HeraldSignalWriteKind) {
        if kind == .immediateSend { wantsImmediateSend = false } else { wantsSharing = false }
    }

    /// The next fragment of `w`, or, once it is all written, the next piece of work.
    mutating func write(_ peer: HeraldPeerCharacteristics, _ w: HeraldSignalWrite) -> HeraldGATTStep {
        var w = w
        guard w.offset >= w.length else {
            w.fragment = min(fragmentSize, w.length - w.offset)
            phase = .writing(peer, w)
            return step
        }
        if w.kind == .immediateSend { immediateSendWritten = true } else { sharingWritten = true }
        clearWant(w.kind)
        return next(peer)
    }

    /// Immediate send, then the payload read, then sharing.
    mutating func next(_ peer: HeraldPeerCharacteristics) -> HeraldGATTStep {
        if wantsImmediateSend {
            phase = .awaitingMessage(peer, .immediateSend)
        } else if wantsPayload {
            payload.removeAll()
            phase = .reading(peer, inOrder: true)
        } else if wantsSharing {
            phase = .awaitingMessage(peer, .payloadSharing)
        } else {
            phase = .finished(.completed)
        }
        return step
    }

    mutating func finish(_ r: HeraldProcedureResult) -> HeraldGATTStep {
        phase = .finished(r)
        return .done(r)
    }
}

/// The link's GATT client reports straight into the procedure running on that link: the client is
/// handed this procedure in place (`HeraldCentralLink.receive`), so no field says which link it is.
/// A completion advances the procedure; the owner sees that the client went idle and acts on `step`.
extension HeraldCentralProcedure: GATTClientDelegate {
    /// The central discovers all services and characteristics, reads and writes (`HeraldCentral.startGATT`);
    /// Herald services notify nothing a central subscribes to. Responses of any other procedure are
    /// not parsed (`.invalidResponse`).
    public static var optionalProcedures: GATTClientOptionalProcedures {
        GATTClientOptionalProcedures(discoverServicesByUUID: false, discoverDescriptors: false, notifications: false)
    }
    public mutating func gattClientDidExchangeMTU(_ mtu: UInt16) { didExchangeMTU(Int(mtu)) }
    public mutating func gattClientDidDiscover(service: GATTDiscoveredService) {
        didDiscover(service: service.uuid, start: service.startHandle, end: service.endHandle)
    }
    public mutating func gattClientDidDiscover(characteristic: GATTDiscoveredCharacteristic) {
        didDiscover(characteristic: characteristic.uuid, valueHandle: characteristic.valueHandle)
    }
    public mutating func gattClientDidRead(handle: UInt16, offset: Int, value: Span<UInt8>) {
        didRead(offset: offset, value: value, handle: handle)
    }
    public mutating func gattClientDidComplete(_ procedure: GATTProcedureKind, error: GATTClientError?) {
        _ = didComplete(succeeded: error == nil)
    }
    /// The walk stops at the first Herald service, and in it once the payload and the iOS signal
    /// characteristic are found (nothing later can change what the procedure does): each round trip
    /// spared is time a central link is held in a crowd (`docs/crowd-issue-39.md`).
    public var gattClientHasFoundWhatItNeeds: Bool {
        switch phase {
        case .discoveringServices(let found): found != nil
        case .discoveringCharacteristics(_, let payload, let signal): payload != nil && signal?.os == .ios
        default: false
        }
    }
}
