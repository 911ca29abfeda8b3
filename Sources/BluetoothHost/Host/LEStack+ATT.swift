/// L2CAP fixed channels and ATT on an `LEStack`'s links: inbound PDUs routed by channel (Core 5.4 Vol 3
/// Part A 2.1), ATT requests served from the GATT database (Vol 3 Part F 3.4), client-side ATT handed
/// to the application, notifications and indications sent, and responses held while the ACL queue
/// is full sent first when room comes back.
extension LEStack {
    mutating func deliver(link: ConnectionSummary, channel: L2CAPChannelID, payload: Span<UInt8>) {
        if link.role == .peripheral, !Self.answersUs(channel: channel, payload: payload) { heard(link) }
        var reply = FixedBytes<23>()
        let inbound = L2CAPFixedChannelRouter.route(channel: channel, payload: payload, role: link.role,
                                   signaling: Self.signalingProcedures, reply: &reply)
        if let replyChannel = inbound.replyChannel, !reply.isEmpty {
            control.sendL2CAP(handle: link.handle, channel: replyChannel, payload: reply.span)
        }
        switch inbound {
        case .att:
            handleATT(link: link, pdu: payload)
        case .signaling(.connectionParameterUpdateResponse(let identifier, let accepted)) where App.requestsConnectionParameters:
            // Our own request (`requestConnectionParameters`) answered: the central applies what it
            // accepted with the link layer's update, reported as LE Connection Update Complete.
            let matched = connections.update(link) { $0.signaling.resolve(identifier: identifier) } ?? false
            if matched, !accepted { counters.refusedParameterRequests &+= 1 }
        case .signaling(.commandRejected(let identifier, _)) where App.requestsConnectionParameters:
            // A central that does not take the request at all (Command Reject, Vol 3 Part A 4.1): it is
            // answered all the same, and the link may ask again.
            let matched = connections.update(link) { $0.signaling.resolve(identifier: identifier) } ?? false
            if matched { counters.refusedParameterRequests &+= 1 }
        case .signaling(.updateConnectionParameters(let request)) where App.connectsAsCentral:
            // We are central: accept what passed validation and apply it (Core 5.4 Vol 3 Part A 4.21).
            var response = FixedBytes<23>()
            L2CAPConnectionParameterUpdateResponse(identifier: request.identifier, accepted: true).write(to: &response)
            control.sendL2CAP(handle: link.handle, channel: .leSignaling, payload: response.span)
            control.send(HCILEConnectionUpdate(
                handle: link.handle, connectionIntervalMin: request.intervalMin, connectionIntervalMax: request.intervalMax,
                maxLatency: request.latency, supervisionTimeout: request.timeout), tag: .connection)
        default:
            break
        }
    }

    /// An ATT response or confirmation: the peer answering what we sent, as when our GATT client reads
    /// a central that connected to us (the wearable reads a Herald device over the link it made,
    /// `HeraldCentral.readOverInboundLink`). It says nothing of the central's own use of the link, so
    /// it neither keeps an inbound link from the idle bound nor spares a central that never sent
    /// anything of its own the refusal (`InboundLinkPolicy`): a silent central that advertises as a
    /// Herald device would otherwise escape both by answering our read.
    static func answersUs(channel: L2CAPChannelID, payload: Span<UInt8>) -> Bool {
        guard channel == .att, payload.count > 0 else { return false }
        let kind = ATTOpcode(rawValue: payload[0]).kind
        return kind == .response || kind == .confirmation
    }

    /// The signalling this stack's application takes part in, by its type: a peripheral-only one
    /// that asks for no parameters (a venue beacon) parses no Connection Parameter Update PDU.
    static var signalingProcedures: L2CAPSignalingProcedures {
        L2CAPSignalingProcedures(answersParameterRequests: App.connectsAsCentral,
                                 sendsParameterRequests: App.requestsConnectionParameters)
    }

    mutating func handleATT(link: ConnectionSummary, pdu: Span<UInt8>) {
        guard pdu.count > 0 else { return }
        switch ATTOpcode(rawValue: pdu[0]).kind {
        case .request, .command, .confirmation:
            serveATT(link: link, pdu: pdu)
        default:
            // Responses, notifications and indications are a client's; a server only drops them.
            guard App.hasGATTClient else { return }
            receiveClientATT(link: link, pdu: pdu)
        }
    }

    // The server's and the client's halves of `handleATT` are out of line, each in a frame of its
    // own: inlined, the server's (the response, its scratch) and the application's client path were
    // one 2.2 KB frame on firmware, on every ATT PDU's path.

    @inline(never)
    mutating func serveATT(link: ConnectionSummary, pdu: Span<UInt8>) {
        // The slot `LinkTable.receive` found the link in, checked, not searched for again.
        guard let i = connections.slot(of: link) else { return }
        var response = PDU()
        let mtu = connections.entries[i].extra.bearer.mtu
        let action = server.handle(pdu: pdu, bearer: &connections.entries[i].extra.bearer,
                                   link: GATTServerLink(handle: link.handle, slot: i),
                                   now: now, database: &database, delegate: &app, response: &response)
        switch action {
        case .respond:
            counters.attResponses &+= 1
            // A response lost to a full queue would leave the client waiting 30 s and then drop
            // the link (Part F 3.3.3): keep it and send it when room appears.
            if !response.withSpan({ control.sendATT(handle: link.handle, pdu: $0) }) {
                counters.heldResponses &+= 1
                connections.entries[i].extra.heldResponse = response
            }
        case .indicationConfirmed(let attribute):
            app.stackIndicationConfirmed(handle: link.handle, attribute: attribute, now: now, control: &control)
        case .disconnect:
            control.disconnect(handle: link.handle)
        case .none:
            break
        }
        // The peer's client exchanged ATT_MTU: our client on this link uses it too.
        let changed = connections.entries[i].extra.bearer.mtu
        if changed != mtu {
            app.stackDidUpdateATTMTU(handle: link.handle, mtu: changed, now: now, control: &control)
        }
    }

    @inline(never)
    mutating func receiveClientATT(link: ConnectionSummary, pdu: Span<UInt8>) {
        let exchanged = clientExchangeEnded(link: link, pdu: pdu)
        app.stackDidReceiveATT(handle: link.handle, pdu: pdu, now: now, control: &control)
        if let mtu = exchanged { app.stackDidUpdateATTMTU(handle: link.handle, mtu: mtu, now: now, control: &control) }
    }

    /// Whether `pdu` ends our client's Exchange MTU on `link` (Core 5.4 Vol 3 Part F 3.4.2): its
    /// response sets the link's one ATT_MTU, which our server then uses too, and an Error Response to
    /// it leaves the link's (the peer's client may have exchanged already). Returns the link's ATT_MTU
    /// then, for the application's client, which otherwise knows only its own exchange; nil for any
    /// other PDU. Our Rx MTU is the server's `maximumMTU`: one receive MTU per device, as the link
    /// buffers hold it.
    mutating func clientExchangeEnded(link: ConnectionSummary, pdu: Span<UInt8>) -> UInt16? {
        guard let i = connections.slot(of: link) else { return nil }
        switch ATTOpcode(rawValue: pdu[0]) {
        case .exchangeMTUResponse:
            guard let r = try? ATTExchangeMTUResponse(pdu) else { return nil }
            connections.entries[i].extra.bearer.clientExchangeAnswered(serverRxMTU: r.serverRxMTU,
                                                                        localRxMTU: server.maximumMTU)
        case .errorResponse:
            guard let e = try? ATTErrorResponse(pdu), e.requestOpcode == .exchangeMTURequest else { return nil }
        default:
            return nil
        }
        return connections.entries[i].extra.bearer.mtu
    }

    /// Queues ATT responses that found the outbound queue full; returns whether any was queued.
    /// `BluetoothStack.flush` calls it around draining the queue.
    mutating func sendHeldResponses() -> Bool {
        var queued = false
        for position in 0..<links {
            // Looked at in place: this runs on every flush, and a copy of the link is its buffers.
            // A vacant position keeps its last link's octets (`LinkTable.entries`): its handle says.
            guard connections.isOccupied(position), !connections.entries[position].extra.heldResponse.isEmpty
            else { continue }
            var response = connections.entries[position].extra.heldResponse
            let handle = connections.entries[position].handle
            if response.withSpan({ control.sendATT(handle: handle, pdu: $0) }) {
                connections.entries[position].extra.heldResponse.removeAll()
                queued = true
            }
        }
        return queued
    }

    /// Notifies `attribute`'s value to link `handle` if that client enabled notifications.
    @discardableResult
    public mutating func notify(handle: UInt16, attribute: UInt16, value: Span<UInt8>) -> ATTNotificationResult {
        guard let i = connections.slot(of: handle) else { return .unknownLink }
        var pdu = PDU()
        guard server.notify(handle: attribute, value: value, bearer: connections.entries[i].extra.bearer,
                            link: GATTServerLink(handle: handle, slot: i), database: database, into: &pdu)
        else { return .notEnabled }
        return pdu.withSpan { control.sendATT(handle: handle, pdu: $0) } ? .sent : .queueFull
    }

    /// Indicates `attribute`'s value to link `handle` (one outstanding per link until confirmed).
    public mutating func indicate(handle: UInt16, attribute: UInt16, value: Span<UInt8>) -> ATTIndicationResult {
        guard let i = connections.slot(of: handle) else { return .unknownLink }
        var pdu = PDU()
        let result = server.indicate(handle: attribute, value: value, bearer: &connections.entries[i].extra.bearer,
                                     link: GATTServerLink(handle: handle, slot: i), now: now, database: database,
                                     into: &pdu)
        // An indication that cannot be queued must not stay outstanding: no confirmation could come,
        // and the 30 s transaction timer (Part F 3.3.3) would then disconnect a healthy link.
        if result == .sent, !pdu.withSpan({ control.sendATT(handle: handle, pdu: $0) }) {
            connections.entries[i].extra.bearer.pendingIndicationHandle = 0
            return .queueFull
        }
        return result
    }

    /// How link `handle` configured the CCCD of the characteristic whose value is at `valueHandle`
    /// (nil: no such link). The database keeps it where the connection table keeps the link;
    /// applications ask by handle.
    public mutating func clientConfiguration(valueHandle: UInt16, link handle: UInt16) -> GATTClientConfiguration? {
        guard let i = connections.slot(of: handle) else { return nil }
        return database.clientConfiguration(valueHandle: valueHandle, slot: i)
    }

    /// The Client Supported Features octet link `handle` wrote (Part G 7.2); nil: no such link.
    public mutating func clientSupportedFeatures(link handle: UInt16) -> UInt8? {
        guard let i = connections.slot(of: handle) else { return nil }
        return database.clientSupportedFeatures(slot: i)
    }

    /// Writes `attribute`'s value as link `handle` reads it (its own copy of a per-link value; a
    /// dynamic value from the application's delegate) from `offset` on into `sink`, for the
    /// application's own use: no permission is checked. Returns the error a read would get; throws
    /// `.unknownHandle` when no link has this handle.
    public mutating func readValue<S: ByteSink>(
        _ attribute: UInt16, link handle: UInt16, offset: Int = 0, into sink: inout S
    ) throws(ConnectionTableError) -> ATTErrorCode? {
        guard let i = connections.slot(of: handle) else { throw .unknownHandle(handle) }
        return database.readValue(attribute, link: GATTServerLink(handle: handle, slot: i), offset: offset,
                                  delegate: &app, into: &sink)
    }

    /// Serves `next` from now on and returns the database served until now, for a server whose
    /// services change while links are up (the EDTT test server's service sets). The GATT service
    /// is the stack's, so each link's state in it moves over: its Service Changed configuration (when
    /// both databases have Service Changed at one handle) and its Client Supported Features (Part G
    /// 7.1, 7.2). Every other per-link value of `next` starts cleared, as a newly registered
    /// service's would (unbonded clients' configurations, Part G 3.3.3.3). Per-link values are
    /// matched by the connection table's positions here, inside the stack, so no application needs
    /// to know them.
    public mutating func replaceDatabase(
        with next: Database
    ) -> Database {
        var next = next
        let changed = Self.serviceChangedValue(&database)
        let carriesChanged = changed != 0 && changed == Self.serviceChangedValue(&next)
        let cccd = next.attribute(changed)?.cccdHandle ?? 0
        var none = GATTNoDelegate()
        for slot in 0..<links {
            next.resetLink(slot: slot)
            guard let handle = connections.handle(atSlot: slot) else { continue }
            let link = GATTServerLink(handle: handle, slot: slot)
            var value = FixedBytes<2>()
            if carriesChanged, cccd != 0 {
                let c = database.clientConfiguration(valueHandle: changed, slot: slot).rawValue
                value.append(UInt8(truncatingIfNeeded: c))
                value.append(UInt8(truncatingIfNeeded: c >> 8))
                _ = next.writeValue(cccd, link: link, offset: 0, value: value.span, delegate: &none)
            }
            let features = database.clientSupportedFeatures(slot: slot)
            if features != 0, next.clientSupportedFeaturesHandle != 0 {
                value.removeAll()
                value.append(features)
                _ = next.writeValue(next.clientSupportedFeaturesHandle, link: link, offset: 0, value: value.span,
                                    delegate: &none)
            }
        }
        swap(&database, &next)
        return next
    }

    /// The Service Changed value handle of `db` (0 if none), found by type: a database served from a
    /// table does not record it.
    static func serviceChangedValue(_ db: inout Database) -> UInt16 {
        let type = BluetoothUUID(uuid16: GATTAttributeType.serviceChanged)
        for i in 0..<db.count {
            let h = db.handle(at: i)
            if db.attribute(h)?.type == type { return h }
        }
        return 0
    }

    /// The negotiated ATT_MTU on `handle` (23 until exchanged, by either side's client).
    public func mtu(handle: UInt16) -> Int? {
        connections[handle: handle].map { Int($0.extra.bearer.mtu) }
    }
}
