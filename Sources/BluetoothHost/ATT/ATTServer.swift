/// What the caller must do after `ATTServer.handle` or `ATTServer.poll`.
public enum ATTServerAction: Equatable, Sendable {
    /// Nothing to send (a command, a confirmation nobody waited for, or a PDU for the client role).
    case none
    /// `response` holds exactly one PDU to send on this bearer.
    case respond
    /// The client confirmed our indication of `handle`; another may be sent now.
    case indicationConfirmed(handle: UInt16)
    /// An ATT transaction timed out: the bearer is dead and the link must be disconnected
    /// (Core 5.4 Vol 3 Part F 3.3.3).
    case disconnect
}

/// Outcome of `ATTServer.indicate`.
public enum ATTIndicationResult: Equatable, Sendable {
    case sent
    /// That connection's CCCD does not enable indications.
    case notEnabled
    /// An indication is still waiting for its confirmation (Part F 3.4.7.2).
    case busy
    /// The bearer timed out earlier; nothing may be sent on it.
    case bearerClosed
    /// The link's outbound queue had no room (`LEStack.indicate`): nothing was sent and nothing is
    /// outstanding; try again once queued data has left.
    case queueFull
    /// No link has this connection handle (`LEStack.indicate`): never connected, or gone.
    case unknownLink
}

/// Outcome of `LEStack.notify`.
public enum ATTNotificationResult: Equatable, Sendable {
    case sent
    /// That link's CCCD does not enable notifications, or its bearer timed out earlier.
    case notEnabled
    /// The link's outbound queue had no room: nothing was sent.
    case queueFull
    /// No link has this connection handle: never connected, or gone.
    case unknownLink
}

/// The ATT server (Core 5.4 Vol 3 Part F), sans-I/O: each received PDU is a pure function of the
/// request bytes, the bearer state and the database, producing at most one response PDU into a
/// caller-supplied sink (the same shape as BTstack's att_db request handler).
///
/// Routing: the connection layer gives this server requests, commands and confirmations (ATT
/// opcodes whose `kind` is `.request`, `.command`, `.confirmation`); responses, notifications and
/// indications belong to the GATT client. Only one request may be outstanding per bearer (Part F
/// 3.3.2): a client that sends a second before our response is violating the protocol, but since this
/// server answers synchronously inside `handle` it has always answered the first already, so every
/// request is simply answered in order.
public struct ATTServer: Sendable {
    /// Largest ATT_MTU we accept (our receive MTU, sent in the Exchange MTU Response).
    public var maximumMTU: UInt16
    /// ATT transaction timeout (Part F 3.3.3).
    public static let transactionTimeout: UInt64 = 30_000

    public init(maximumMTU: UInt16 = ATTMTU.defaultMaximum) {
        self.maximumMTU = max(maximumMTU, ATTMTU.minimum)
    }

    /// Handles one received PDU from `link` (its handle goes to the delegate; the database keeps its
    /// CCCDs where the connection table keeps the link).
    ///
    /// The bearer's prepare queue is the delegate's `PrepareQueue`, not a generic parameter of its
    /// own: the delegate already decides whether queued writes exist (`serverFeatures`), so it names
    /// their queue too, and this function takes three generic parameters (the database, the
    /// delegate, the response sink) instead of four. It is specialised for the same concrete types
    /// as before, so speed and size stay (host ATT read 188-189 ns p0 before and after; firmware
    /// images 0.4-0.5 KB smaller). A non-generic sink would have meant a second scratch type for
    /// discovery's values (see `ATTResponseSink`), and a delegate carried by the database would
    /// have tied `GATTDatabase` to one application type.
    public func handle<DB: GATTAttributeDatabase, D: GATTServerDelegate, Out: ATTResponseSink>(
        pdu: Span<UInt8>, bearer: inout ATTBearer<D.PrepareQueue>, link: GATTServerLink, now: UInt64,
        database: inout DB, delegate: inout D, response: inout Out
    ) -> ATTServerAction {
        if poll(bearer: &bearer, now: now) == .disconnect { return .disconnect }
        guard !bearer.isTimedOut, pdu.count > 0 else { return .none }
        let opcode = ATTOpcode(rawValue: pdu[0])
        // Nothing longer than ATT_MTU may be sent (Part F 3.2.8); answering such a request could need a
        // response longer than ATT_MTU too (a Prepare Write echo), so it is an Invalid PDU.
        guard pdu.count <= Int(bearer.mtu) else {
            guard opcode.kind == .request else { return .none }
            return error(opcode, 0, .invalidPDU, &response)
        }
        // Procedures the application left out (GATTServerFeatures) are refused like unknown ones.
        guard Self.offers(opcode, D.serverFeatures) else { return error(opcode, 0, .requestNotSupported, &response) }
        var context = Context(link: link, mtu: Int(bearer.mtu), security: bearer.security)
        do throws(DecodeError) {
            switch opcode {
            case .exchangeMTURequest:
                let r = try ATTExchangeMTURequest(pdu)
                // Part G 4.3.1: ATT_MTU = min(client Rx MTU, server Rx MTU), never below 23, for
                // both roles on the link (ATTBearer); only the peer's first request changes it.
                if !bearer.exchangedByPeer {
                    bearer.mtu = ATTMTU.agreed(r.clientRxMTU, maximumMTU)
                    bearer.exchangedByPeer = true
                }
                ATTExchangeMTUResponse(serverRxMTU: maximumMTU).write(to: &response)
                return .respond
            case .findInformationRequest:
                let r = try ATTFindInformationRequest(pdu)
                return discover(opcode, from: r.startingHandle, to: r.endingHandle, type: BluetoothUUID(uuid16: 0), value: Span(),
                                &context, &database, &delegate, &response)
            case .findByTypeValueRequest:
                let r = try ATTFindByTypeValueRequest(pdu)
                return discover(opcode, from: r.startingHandle, to: r.endingHandle, type: BluetoothUUID(uuid16: r.attributeType),
                                value: r.attributeValue, &context, &database, &delegate, &response)
            case .readByTypeRequest:
                let r = try ATTReadByTypeRequest(pdu)
                return discover(opcode, from: r.startingHandle, to: r.endingHandle, type: r.attributeType, value: Span(),
                                &context, &database, &delegate, &response)
            case .readRequest:
                let r = try ATTReadRequest(pdu)
                return read(opcode, handle: r.handle, offset: 0, &context, &database, &delegate, &response)
            case .readBlobRequest:
                let r = try ATTReadBlobRequest(pdu)
                return read(opcode, handle: r.handle, offset: Int(r.offset), &context, &database, &delegate, &response)
            case .readMultipleRequest:
                let r = try ATTReadMultipleRequest(pdu)
                return readMultiple(opcode, r.setOfHandles, &context, &database, &delegate, &response)
            case .readMultipleVariableRequest:
                let r = try ATTReadMultipleVariableRequest(pdu)
                return readMultiple(opcode, r.setOfHandles, &context, &database, &delegate, &response)
            case .readByGroupTypeRequest:
                let r = try ATTReadByGroupTypeRequest(pdu)
                return discover(opcode, from: r.startingHandle, to: r.endingHandle, type: r.attributeGroupType, value: Span(),
                                &context, &database, &delegate, &response)
            case .writeRequest:
                let r = try ATTWriteRequest(pdu)
                if let e = write(handle: r.handle, value: r.value, &context, &database, &delegate) {
                    return error(opcode, r.handle, e, &response)
                }
                ATTWriteResponse().write(to: &response)
                return .respond
            case .writeCommand:
                // Part F 3.4.5.3: no response, not even an error. A characteristic value takes
                // commands only if its declaration lists Write Without Response (Part G 4.9.1,
                // 3.3.1.1); anything else is dropped, so a peer cannot bypass a write procedure the
                // profile asked for (e.g. Herald's signal characteristic is write-with-response).
                // Checked on the delegate's type first, so that a server without them links no
                // command path (GATTServerFeatures.writeCommands).
                guard D.serverFeatures.writeCommands else { return .none }
                let r = try ATTWriteCommand(pdu)
                guard database.acceptsWriteCommand(r.handle) else { return .none }
                _ = write(handle: r.handle, value: r.value, &context, &database, &delegate)
                return .none
            case .signedWriteCommand:
                // We hold no CSRK to verify signatures, so signed writes are dropped (Part F 3.4.5.4
                // gives a command no way to report failure).
                return .none
            case .prepareWriteRequest:
                return prepareWrite(try ATTPrepareWriteRequest(pdu), &bearer, &context, &database, &response)
            case .executeWriteRequest:
                return executeWrite(try ATTExecuteWriteRequest(pdu), &bearer, &context, &database, &delegate, &response)
            case .handleValueConfirmation:
                _ = try ATTHandleValueConfirmation(pdu)
                // A confirmation with nothing outstanding is a client error with no answer; ignore it.
                guard bearer.hasPendingIndication else { return .none }
                let h = bearer.pendingIndicationHandle
                bearer.pendingIndicationHandle = 0
                return .indicationConfirmed(handle: h)
            default:
                // Part F 3.4.9: unknown commands are ignored, unknown requests get Request Not Supported.
                guard opcode.kind == .request else { return .none }
                return error(opcode, 0, .requestNotSupported, &response)
            }
        } catch {
            // Malformed requests get Invalid PDU with handle 0x0000 (Part F 3.4.1.1); malformed
            // commands and confirmations are dropped.
            guard opcode.kind == .request else { return .none }
            return self.error(opcode, 0, .invalidPDU, &response)
        }
    }

    /// When `poll` must next be called for this bearer (the pending indication's timeout), if ever.
    public func nextDeadline<Q: ATTPrepareQueue>(bearer: borrowing ATTBearer<Q>) -> UInt64? {
        bearer.nextDeadline
    }

    /// Checks the outstanding indication's transaction timer. Call when `bearer.nextDeadline` passes.
    public func poll<Q: ATTPrepareQueue>(bearer: inout ATTBearer<Q>, now: UInt64) -> ATTServerAction {
        if bearer.isTimedOut { return .none }
        guard bearer.hasPendingIndication, now >= bearer.pendingIndicationSentAt &+ Self.transactionTimeout else {
            return .none
        }
        bearer.isTimedOut = true
        return .disconnect
    }

    /// Writes a Handle Value Notification of `value` (cut to ATT_MTU-3, Part F 3.4.7.1) if `link`
    /// enabled notifications in the characteristic's CCCD. Returns whether a PDU was written.
    public func notify<DB: GATTAttributeDatabase, Q: ATTPrepareQueue, Out: ByteSink>(
        handle: UInt16, value: Span<UInt8>, bearer: borrowing ATTBearer<Q>, link: GATTServerLink,
        database: borrowing DB, into out: inout Out
    ) -> Bool {
        guard !bearer.isTimedOut,
              database.clientConfiguration(valueHandle: handle, link: link).contains(.notification)
        else { return false }
        let n = min(value.count, Int(bearer.mtu) - 3)
        ATTHandleValueNotification(handle: handle, value: value.extracting(0..<n)).write(to: &out)
        return true
    }

    /// Writes a Handle Value Indication (cut to ATT_MTU-3, Part F 3.4.7.2) if `link` enabled
    /// indications and none is outstanding, and starts its 30-second transaction timer at `now`.
    public func indicate<DB: GATTAttributeDatabase, Q: ATTPrepareQueue, Out: ByteSink>(
        handle: UInt16, value: Span<UInt8>, bearer: inout ATTBearer<Q>, link: GATTServerLink, now: UInt64,
        database: borrowing DB, into out: inout Out
    ) -> ATTIndicationResult {
        guard !bearer.isTimedOut else { return .bearerClosed }
        guard database.clientConfiguration(valueHandle: handle, link: link).contains(.indication) else {
            return .notEnabled
        }
        guard !bearer.hasPendingIndication else { return .busy }
        let n = min(value.count, Int(bearer.mtu) - 3)
        ATTHandleValueIndication(handle: handle, value: value.extracting(0..<n)).write(to: &out)
        bearer.pendingIndicationHandle = handle
        bearer.pendingIndicationSentAt = now
        return .sent
    }

    // MARK: Shared pieces

    struct Context {
        var link: GATTServerLink
        var mtu: Int
        var security: ATTLinkSecurity
    }

    /// Whether `features` include the optional procedure `opcode` belongs to.
    @inline(__always)
    static func offers(_ opcode: ATTOpcode, _ features: GATTServerFeatures) -> Bool {
        switch opcode {
        case .readMultipleRequest, .readMultipleVariableRequest: return features.readMultiple
        case .prepareWriteRequest, .executeWriteRequest: return features.queuedWrites
        default: return true
        }
    }

    /// Out of line: some twenty refusals share it, and inlined each wrote the five octets itself.
    @inline(never)
    func error<Out: ByteSink>(_ opcode: ATTOpcode, _ handle: UInt16, _ code: ATTErrorCode, _ out: inout Out) -> ATTServerAction {
        ATTErrorResponse(requestOpcode: opcode, handle: handle, error: code).write(to: &out)
        return .respond
    }

    /// Part F 3.4.3.1 / 3.4.4.1 / 3.4.4.9: a starting handle of 0x0000 or above the ending handle is
    /// Invalid Handle, reported on the starting handle.
    func checkRange(_ start: UInt16, _ end: UInt16) -> Bool { start != 0 && start <= end }

    func write<DB: GATTAttributeDatabase, D: GATTServerDelegate>(
        handle: UInt16, value: Span<UInt8>, _ c: inout Context, _ db: inout DB, _ delegate: inout D
    ) -> ATTErrorCode? {
        if let e = db.checkAccess(handle, write: true, security: c.security) { return e }
        guard value.count <= ATTMTU.maximumAttributeLength else { return .invalidAttributeValueLength }
        return db.writeValue(handle, link: c.link, offset: 0, value: value, delegate: &delegate)
    }

    func prepareWrite<DB: GATTAttributeDatabase, Q: ATTPrepareQueue, Out: ByteSink>(
        _ r: borrowing ATTPrepareWriteRequest, _ bearer: inout ATTBearer<Q>, _ c: inout Context,
        _ db: inout DB, _ out: inout Out
    ) -> ATTServerAction {
        // Handle and permissions are checked now; offsets and lengths at execution (Part F 3.4.6.1).
        if let e = db.checkAccess(r.handle, write: true, security: c.security) {
            return error(.prepareWriteRequest, r.handle, e, &out)
        }
        guard bearer.queue.enqueue(handle: r.handle, offset: r.offset, value: r.partValue) else {
            return error(.prepareWriteRequest, r.handle, .prepareQueueFull, &out)
        }
        ATTPrepareWriteResponse(handle: r.handle, offset: r.offset, partValue: r.partValue).write(to: &out)
        return .respond
    }

    func executeWrite<DB: GATTAttributeDatabase, D: GATTServerDelegate, Out: ByteSink>(
        _ r: ATTExecuteWriteRequest, _ bearer: inout ATTBearer<D.PrepareQueue>, _ c: inout Context,
        _ db: inout DB, _ delegate: inout D, _ out: inout Out
    ) -> ATTServerAction {
        defer { bearer.queue.removeAll() }
        guard r.flags == .write else {
            ATTExecuteWriteResponse().write(to: &out)
            return .respond
        }
        // Part F 3.4.6.3: if any prepared value cannot be written, none is. Offsets and lengths of
        // values the database holds are checked for the whole queue before anything is written;
        // delegate values can only refuse their own part when it arrives.
        for i in 0..<bearer.queuedWrites {
            let e = bearer.queue.entry(i)
            guard let length = db.valueLength(e.handle, link: c.link),
                  let capacity = db.storedCapacity(e.handle) else { continue }
            var reach = length
            for k in 0..<i where bearer.queue.entry(k).handle == e.handle {
                let p = bearer.queue.entry(k)
                reach = Int(p.offset) + p.length
            }
            if Int(e.offset) > reach { return error(.executeWriteRequest, e.handle, .invalidOffset, &out) }
            if Int(e.offset) + e.length > capacity {
                return error(.executeWriteRequest, e.handle, .invalidAttributeValueLength, &out)
            }
        }
        for i in 0..<bearer.queuedWrites {
            let e = bearer.queue.entry(i)
            let failure = bearer.queue.withValue(i) { value in
                db.writeValue(e.handle, link: c.link, offset: Int(e.offset), value: value, delegate: &delegate)
            }
            if let failure { return error(.executeWriteRequest, e.handle, failure, &out) }
        }
        ATTExecuteWriteResponse().write(to: &out)
        return .respond
    }
}
