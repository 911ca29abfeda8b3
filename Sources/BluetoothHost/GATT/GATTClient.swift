/// The GATT client of one link (Core 5.4 Vol 3 Part G 4), sans-I/O.
///
/// A state machine over the ATT bearer's client role: `start` writes a procedure's first request into a
/// caller-supplied sink, `handle` consumes each ATT PDU the peer sends to the client role (responses,
/// notifications, indications: the ATT payload of L2CAP channel 0x0004, opcode first) and may write
/// the next request or a confirmation, and `tick` enforces the transaction timeout. Results go to a
/// generic `GATTClientDelegate` as they arrive, so discovery and long reads need no result storage.
///
/// One procedure runs at a time, because ATT allows one outstanding request per bearer (Part F 3.3.2).
/// Write Without Response is a command, not a request, and may be sent at any time.
///
/// `longWriteCapacity` is the room for a Write Long value. The client copies the value at `start`
/// rather than asking the application for each chunk, because it must compare every Prepare Write
/// Response with the chunk it sent (Part G 4.9.4); with its own copy that check cannot be fooled by
/// an application whose bytes changed between sending and checking, and the delegate stays simple. 512 (`GATTStandardClient`) holds any attribute value
/// (Part F 3.2.9); firmware that never writes long values can use `GATTClient<0>` and save the RAM.
public struct GATTClient<let longWriteCapacity: Int> {
    /// ATT transaction timeout (Part F 3.3.3).
    public static var transactionTimeout: UInt64 { 30_000 }

    /// Our receive MTU, offered in Exchange MTU.
    public let maximumMTU: UInt16
    /// ATT_MTU in use on this bearer: 23 until an exchange (Part G 5.2.1).
    public internal(set) var mtu: UInt16 = ATTMTU.minimum
    /// This client sent its one Exchange MTU Request (Part F 3.4.2.1 allows one per connection).
    public internal(set) var mtuExchangeSent = false
    /// A transaction timed out: the bearer is dead and nothing more is sent (Part F 3.3.3).
    public internal(set) var isTimedOut = false
    /// Responses that arrived while no request was outstanding (dropped).
    public internal(set) var unsolicitedResponses = 0
    /// Notifications or indications that did not parse, and PDUs for the server role (dropped).
    public internal(set) var ignoredPDUs = 0

    var phase: Phase = .idle
    var running: GATTProcedureKind = .exchangeMTU
    var requestSentAt: UInt64 = 0
    /// The UUID a Discover Primary Service by Service UUID looks for (responses carry only handles).
    var serviceUUID = BluetoothUUID(uuid16: 0)
    var writeBuffer: InlineArray<longWriteCapacity, UInt8>
    var writeLength = 0

    /// Where the outstanding procedure is; each case names the request that is waiting for its answer.
    enum Phase: Equatable {
        case idle
        case exchangingMTU
        /// Read By Group Type over `start`...0xFFFF.
        case discoveringServices(start: UInt16)
        /// Find By Type Value over `start`...0xFFFF.
        case discoveringServicesByUUID(start: UInt16)
        /// Read By Type 0x2803 over `start`...`end`.
        case discoveringCharacteristics(start: UInt16, end: UInt16)
        /// Find Information over `start`...`end`.
        case discoveringDescriptors(start: UInt16, end: UInt16)
        /// Read Request (plain read, or the first part of a long read).
        case reading(handle: UInt16)
        /// Read By Type of a characteristic UUID over 0x0001...0xFFFF (Read Using Characteristic UUID).
        case readingByType(uuid: BluetoothUUID)
        /// Read Blob Request from `offset`.
        case readingBlob(handle: UInt16, offset: UInt16)
        /// Write Request (a value or a CCCD).
        case writing(handle: UInt16)
        /// Prepare Write Request of `length` octets from `offset` of the write buffer.
        case preparing(handle: UInt16, offset: Int, length: Int)
        /// Execute Write Request (flags 0x01).
        case executing(handle: UInt16)
        /// Execute Write Request (flags 0x00) after a failure; `error` is reported once it is answered.
        case cancelling(handle: UInt16, error: GATTClientError)

        /// The response the outstanding request expects; its request opcode is one less (Part F 3.3.1).
        var expectedResponse: ATTOpcode {
            switch self {
            case .idle: return ATTOpcode(rawValue: 0)
            case .exchangingMTU: return .exchangeMTUResponse
            case .discoveringServices: return .readByGroupTypeResponse
            case .discoveringServicesByUUID: return .findByTypeValueResponse
            case .discoveringCharacteristics: return .readByTypeResponse
            case .discoveringDescriptors: return .findInformationResponse
            case .reading: return .readResponse
            case .readingByType: return .readByTypeResponse
            case .readingBlob: return .readBlobResponse
            case .writing: return .writeResponse
            case .preparing: return .prepareWriteResponse
            case .executing, .cancelling: return .executeWriteResponse
            }
        }
    }

    public init(maximumMTU: UInt16 = ATTMTU.defaultMaximum) {
        self.maximumMTU = max(maximumMTU, ATTMTU.minimum)
        writeBuffer = InlineArray(repeating: 0)
    }

    /// Uses `mtu`, the link's ATT_MTU as the owner of the bearer keeps it (`LEApplication.stackDidUpdateATTMTU`):
    /// one per bearer, for client and server alike (Part F 3.4.2.2), whichever side's client
    /// exchanged it. Never below 23.
    public mutating func useLinkMTU(_ mtu: UInt16) {
        self.mtu = max(ATTMTU.minimum, mtu)
    }

    /// A procedure is outstanding. By its case alone: `Phase`'s synthesised `==` compares every
    /// case's payload (UUIDs, errors), and inlined at each test of idleness it was 100-200 B.
    public var isBusy: Bool {
        if case .idle = phase { return false }
        return true
    }

    /// The outstanding procedure, if any.
    public var currentProcedure: GATTProcedureKind? { isBusy ? running : nil }

    /// When the outstanding request's transaction timer fires (nil when none is outstanding); call
    /// `tick` then.
    public var nextDeadline: UInt64? {
        isBusy && !isTimedOut ? requestSentAt &+ Self.transactionTimeout : nil
    }

    // MARK: Starting

    /// Starts `procedure` at `now`, writing its first request PDU into `request`. Throws `.busy` while
    /// another procedure is outstanding (except for Write Without Response), `.bearerClosed` after a
    /// timeout, `.invalidParameter` or `.valueTooLong` for arguments that cannot go on the wire; nothing
    /// is written when it throws.
    public mutating func start<S: ByteSink>(
        _ procedure: borrowing GATTProcedure, now: UInt64, into request: inout S
    ) throws(GATTClientError) {
        guard !isTimedOut else { throw .bearerClosed }
        switch procedure {
        case .writeWithoutResponse(let handle, let value):
            // A command: no response, no transaction, so no busy check and no timer (Part F 3.3.2).
            guard handle != 0 else { throw .invalidParameter }
            try checkFits(value.count, limit: Int(mtu) - 3)
            ATTWriteCommand(handle: handle, value: value).write(to: &request)
            return
        default:
            break
        }
        guard !isBusy else { throw .busy }
        let next: Phase
        switch procedure {
        case .exchangeMTU:
            guard !mtuExchangeSent else { throw .invalidParameter }
            mtuExchangeSent = true
            running = .exchangeMTU
            next = .exchangingMTU
        case .discoverAllPrimaryServices:
            running = .discoverAllPrimaryServices
            next = .discoveringServices(start: 0x0001)
        case .discoverPrimaryServices(let uuid):
            running = .discoverPrimaryServices
            serviceUUID = uuid
            next = .discoveringServicesByUUID(start: 0x0001)
        case .discoverAllCharacteristics(let start, let end):
            guard start != 0, start <= end else { throw .invalidParameter }
            running = .discoverAllCharacteristics
            next = .discoveringCharacteristics(start: start, end: end)
        case .discoverAllDescriptors(let start, let end):
            guard start != 0, start <= end else { throw .invalidParameter }
            running = .discoverAllDescriptors
            next = .discoveringDescriptors(start: start, end: end)
        case .read(let handle):
            guard handle != 0 else { throw .invalidParameter }
            running = .read
            next = .reading(handle: handle)
        case .readLong(let handle):
            guard handle != 0 else { throw .invalidParameter }
            running = .readLong
            next = .reading(handle: handle)
        case .readUsingCharacteristicUUID(let uuid):
            running = .readUsingCharacteristicUUID
            next = .readingByType(uuid: uuid)
        case .write(let handle, let value):
            guard handle != 0 else { throw .invalidParameter }
            try checkFits(value.count, limit: Int(mtu) - 3)
            running = .write
            ATTWriteRequest(handle: handle, value: value).write(to: &request)
            next = .writing(handle: handle)
        case .writeLong(let handle, let value):
            guard handle != 0, value.count > 0 else { throw .invalidParameter }
            try checkFits(value.count, limit: min(longWriteCapacity, ATTMTU.maximumAttributeLength))
            running = .writeLong
            for i in value.indices { writeBuffer[i] = value[i] }
            writeLength = value.count
            next = preparing(handle: handle, offset: 0)
        case .setClientConfiguration(let handle, let configuration):
            guard handle != 0 else { throw .invalidParameter }
            running = .setClientConfiguration
            // The CCCD value is a 16-bit little-endian bit field (Part G 3.3.3.3).
            var value = FixedBytes<2>()
            value.append(u16: configuration.rawValue)
            ATTWriteRequest(handle: handle, value: value.span).write(to: &request)
            next = .writing(handle: handle)
        case .writeWithoutResponse:
            return  // handled above
        }
        writeRequest(for: next, into: &request)
        phase = next
        requestSentAt = now
    }

    func checkFits(_ length: Int, limit: Int) throws(GATTClientError) {
        guard length <= limit else { throw .valueTooLong(length: length, limit: limit) }
    }

    /// The Prepare Write of the chunk at `offset`: ATT_MTU-5 octets, since the request spends 5 on
    /// opcode, handle and offset (Part F 3.4.6.1), or what is left of the value.
    func preparing(handle: UInt16, offset: Int) -> Phase {
        .preparing(handle: handle, offset: offset, length: min(Int(mtu) - 5, writeLength - offset))
    }

    /// Writes the request that `phase` waits for. Write Requests are written by `start` (their value
    /// is the caller's and is not kept); every other request is rebuilt here from the phase.
    func writeRequest<S: ByteSink>(for phase: Phase, into out: inout S) {
        switch phase {
        case .idle, .writing:
            break
        case .exchangingMTU:
            ATTExchangeMTURequest(clientRxMTU: maximumMTU).write(to: &out)
        case .discoveringServices(let start):
            ATTReadByGroupTypeRequest(startingHandle: start, endingHandle: 0xFFFF,
                                      attributeGroupType: BluetoothUUID(uuid16: GATTAttributeType.primaryService)).write(to: &out)
        case .discoveringServicesByUUID(let start):
            // The value is compared octet for octet with the declaration's, which holds the UUID in its
            // shortest form (Part G 3.1), so a 16-bit UUID is sent in 2 octets.
            var value = FixedBytes<16>()
            serviceUUID.write(to: &value, size: serviceUUID.shortestWireSize)
            ATTFindByTypeValueRequest(startingHandle: start, endingHandle: 0xFFFF,
                                      attributeType: GATTAttributeType.primaryService, attributeValue: value.span).write(to: &out)
        case .discoveringCharacteristics(let start, let end):
            ATTReadByTypeRequest(startingHandle: start, endingHandle: end,
                                 attributeType: BluetoothUUID(uuid16: GATTAttributeType.characteristic)).write(to: &out)
        case .discoveringDescriptors(let start, let end):
            ATTFindInformationRequest(startingHandle: start, endingHandle: end).write(to: &out)
        case .reading(let handle):
            ATTReadRequest(handle: handle).write(to: &out)
        case .readingByType(let uuid):
            ATTReadByTypeRequest(startingHandle: 0x0001, endingHandle: 0xFFFF, attributeType: uuid).write(to: &out)
        case .readingBlob(let handle, let offset):
            ATTReadBlobRequest(handle: handle, offset: offset).write(to: &out)
        case .preparing(let handle, let offset, let length):
            ATTPrepareWriteRequest(handle: handle, offset: UInt16(truncatingIfNeeded: offset),
                                   partValue: writeBuffer.span.extracting(offset..<(offset + length))).write(to: &out)
        case .executing:
            ATTExecuteWriteRequest(flags: .write).write(to: &out)
        case .cancelling:
            ATTExecuteWriteRequest(flags: .cancel).write(to: &out)
        }
    }

    // MARK: Time

    /// Runs the transaction timer: if the outstanding request has waited 30 s (Part F 3.3.3) the
    /// procedure completes with `.timeout`, the bearer is closed and `.disconnect` is returned.
    public mutating func tick<D: GATTClientDelegate>(now: UInt64, delegate: inout D) -> GATTClientAction {
        guard let deadline = nextDeadline, now >= deadline else { return .none }
        isTimedOut = true
        finish(.timeout, delegate: &delegate)
        return .disconnect
    }

    /// Ends the outstanding procedure and reports it.
    mutating func finish<D: GATTClientDelegate>(_ error: GATTClientError?, delegate: inout D) {
        phase = .idle
        writeLength = 0
        delegate.gattClientDidComplete(running, error: error)
    }

    // MARK: Receiving

    /// Handles one ATT PDU from the peer addressed to the client role (a response, notification or
    /// indication) at `now`. Writes at most one PDU into `reply` and says so in the returned action.
    /// Malformed or unexpected responses end the procedure with a typed error; nothing a peer sends
    /// can trap.
    public mutating func handle<D: GATTClientDelegate, R: ByteSink>(
        pdu: Span<UInt8>, now: UInt64, delegate: inout D, reply: inout R
    ) -> GATTClientAction {
        if tick(now: now, delegate: &delegate) == .disconnect { return .disconnect }
        guard !isTimedOut else { return .none }
        guard pdu.count > 0 else { ignoredPDUs &+= 1; return .none }
        let opcode = ATTOpcode(rawValue: pdu[0])
        switch opcode.kind {
        case .response:
            guard isBusy else { unsolicitedResponses &+= 1; return .none }
            return handleResponse(opcode, pdu: pdu, now: now, delegate: &delegate, reply: &reply)
        case .notification:
            guard D.optionalProcedures.notifications else { ignoredPDUs &+= 1; return .none }
            deliverNotification(opcode, pdu: pdu, delegate: &delegate)
            return .none
        case .indication:
            guard let indication = try? ATTHandleValueIndication(pdu) else { ignoredPDUs &+= 1; return .none }
            delegate.gattClientDidReceiveIndication(handle: indication.handle, value: indication.value)
            // Part G 4.11.1: every indication is confirmed; confirmations are outside the request
            // transaction, so one may go out while our own request is outstanding (Part F 3.3.2).
            ATTHandleValueConfirmation().write(to: &reply)
            return .send
        default:
            // Requests, commands and confirmations belong to the server role.
            ignoredPDUs &+= 1
            return .none
        }
    }

    mutating func deliverNotification<D: GATTClientDelegate>(_ opcode: ATTOpcode, pdu: Span<UInt8>, delegate: inout D) {
        if opcode == .handleValueNotification {
            guard let n = try? ATTHandleValueNotification(pdu) else { ignoredPDUs &+= 1; return }
            delegate.gattClientDidReceiveNotification(handle: n.handle, value: n.value)
        } else {
            // Multiple Handle Value Notification (Part F 3.4.7.4): the decoder walks every length
            // first, so a bad list is dropped whole rather than half delivered.
            guard let m = try? ATTMultipleHandleValueNotification(pdu) else { ignoredPDUs &+= 1; return }
            var entries = m.makeIterator()
            while let e = entries.next() {
                delegate.gattClientDidReceiveNotification(handle: e.handle, value: e.value)
            }
        }
    }
}

/// A client with room to write any attribute value long (512 octets, Core 5.4 Vol 3 Part F 3.2.9).
public typealias GATTStandardClient = GATTClient<512>
