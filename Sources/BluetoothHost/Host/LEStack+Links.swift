/// The links of an `LEStack`: a link comes up (LE Connection Complete, Core 5.4 Vol 4 Part E 7.7.65.1),
/// is kept in `connections` with its reassembler and ATT bearer, has its parameters asked for or
/// answered (Vol 3 Part A 4.20, Vol 4 Part E 7.7.65.6), and goes down (Disconnection Complete, 7.7.5)
/// with everything it held released: credits, queued PDUs, the attempt it ended.
extension LEStack {
    mutating func linkUp(_ c: HCILEConnectionCompleteEvent) {
        let peer = c.peer
        // The attempt this event ends stays in `control.connecting` until `endAttempt` reports it,
        // on whichever path below: one that reported nothing would still end at its deadline (`tick`).
        let attempt = App.connectsAsCentral ? attempt(endedBy: c) : nil
        guard c.status == .success else {
            if let a = attempt { endAttempt(a, .failed(a.reported(c.status))) }
            return
        }
        // A Connection_Handle names one link at a time (Core 5.4 Vol 4 Part E 5.3.1): a new link on
        // a handle we still hold means the controller ended the old one without its Disconnection
        // Complete (Bumble's virtual controller, after a second link between one pair of devices
        // replaced the first: our Disconnect of it got Command Status and nothing more). The old link
        // ends here, as ours if we had asked to end it, else as lost.
        if connections.slot(of: c.handle) != nil {
            counters.reusedHandles &+= 1
            linkDown(handle: c.handle,
                     reason: control.credits.isDisconnecting(handle: c.handle) ? .localHostTerminated : .connectionTimeout)
        }
        let timing = ConnectionTiming(interval: c.connectionInterval, latency: c.peripheralLatency,
                                      supervisionTimeout: c.supervisionTimeout)
        var slot = 0
        do throws(ConnectionTableError) {
            // Host-to-controller credits are tracked for 16 handles (`StackControl.credits`); a stack
            // built for more links refuses the 17th as it refuses one its table has no room for.
            guard control.credits.open(handle: c.handle) else { throw .full(capacity: 16) }
            do throws(ConnectionTableError) {
                slot = try connections.insert(handle: c.handle, role: c.role, peer: peer, timing: timing)
            } catch {
                _ = control.credits.close(handle: c.handle)
                throw error
            }
        } catch {
            // No room to account for this link's traffic: refuse it (0x14 remote terminated: low
            // resources is the reason a host gives for that, Core 5.4 Vol 1 Part F 2.20).
            counters.rejectedConnections &+= 1
            control.disconnect(handle: c.handle, reason: HCIStatus(rawValue: 0x14))
            if c.role == .peripheral {
                // The controller stopped connectable advertising when this central connected (Core
                // 5.4 Vol 6 Part B 4.4.2.3); the application never hears of the link, so it is told
                // through the count (and `linkDown` resumes the stack's own advertising).
                control.advertiserEnabled = false
                control.refusedWhileAdvertising &+= 1
            } else if let a = attempt {
                // Our attempt ended in a link we cannot keep. The application hears it refused for
                // want of room (0x0D, Core 5.4 Vol 1 Part F 2.13), no failure of the peer's, and the
                // scan the attempt paused goes on. Its Disconnection Complete finds no link to report.
                endAttempt(a, .failed(.connectionRejectedLimitedResources))
            }
            return
        }
        let admitted = c.role == .central || admitInbound(handle: c.handle, peer: peer)
        updateInboundRoom()
        // A refused link is being closed: asking its link layer for more would only queue commands
        // (one in flight) that a controller may refuse on an ending link.
        if admitted {
            if let length = linkDataLength {
                control.send(HCILESetDataLength(handle: c.handle, txOctets: length.octets, txTime: length.time), tag: .gap)
            }
            linkUpPHY(handle: c.handle, role: c.role)
        }
        if c.role == .peripheral, control.advertiserEnabled {
            // Legacy connectable advertising stops when a central connects (Core 5.4 Vol 6 Part B
            // 4.4.2.3); more centrals can find us if it starts again.
            control.advertiserEnabled = false
            if let a = control.advertising, a.restartAfterConnection, control.acceptsInboundLinks {
                control.send(HCILESetAdvertisingEnable(true), tag: .gap)
                control.advertiserEnabled = true
            }
        }
        // The peer we are initiating to connected to us first: a second link between the same two
        // devices would only duplicate this one, so the attempt is cancelled and reported as
        // 0x0B Connection Already Exists; the application works over this link instead.
        if App.connectsAsCentral, c.role == .peripheral, let pending = control.connecting,
           pending.peer.address == peer.address {
            control.cancelAttempt(reason: .connectionAlreadyExists, now: now)
        }
        let summary = ConnectionSummary(handle: c.handle, role: c.role, peer: peer, timing: timing, slot: slot)
        if let a = attempt {
            endAttempt(a, .connected(summary))
        } else {
            app.stackDidConnect(summary, now: now, control: &control)
        }
    }

    /// Which connection attempt LE Connection Complete `c` ends, if any (Core 5.4 Vol 4 Part E
    /// 7.7.65.1). Only our own LE Create Connection makes us central (Vol 6 Part B 4.5), one at a
    /// time (Vol 4 Part E 7.8.12), so a link as central from its address ends it. A failed event
    /// ends it too (after our cancel: 0x02 Unknown Connection Identifier) unless it is the
    /// advertising side's: role peripheral, or 0x3C Advertising Timeout, which only high duty cycle
    /// directed advertising reports (7.8.9) and which Zephyr's controller sends, like every failed
    /// event, with all but the status cleared (role 0x00, central).
    func attempt(endedBy c: HCILEConnectionCompleteEvent) -> ConnectionAttempt? {
        guard let attempt = control.connecting else { return nil }
        // A link as central from another address than the attempt's (we connect to the address as
        // advertised, with no resolving list: `StackControl.connect`) is the late link of an attempt
        // already ended, reported then: the attempt under way goes on to its own end.
        if c.status == .success {
            return c.role == .central && c.peer.address == attempt.peer.address ? attempt : nil
        }
        return c.role == .peripheral || c.status == .advertisingTimeout ? nil : attempt
    }

    /// How a connection attempt ended: in a link the application now holds, or not (why).
    enum AttemptEnd {
        case connected(ConnectionSummary)
        case failed(HCIStatus)
    }

    /// Ends the connection attempt under way: every end of one (link, failed or refused Connection
    /// Complete, refused or unanswered LE Create Connection, a cancel the controller never
    /// confirmed) comes here, so the application hears each attempt end once, as `stackDidConnect`
    /// or `stackDidFailToConnect`, with the attempt already cleared so that its callback may start
    /// the next. Then the scan it wants resumes unless that callback started another attempt.
    mutating func endAttempt(_ attempt: ConnectionAttempt, _ end: AttemptEnd) {
        control.connecting = nil
        switch end {
        case .connected(let link):
            app.stackDidConnect(link, now: now, control: &control)
        case .failed(let status):
            app.stackDidFailToConnect(to: attempt.peer, status: status, now: now, control: &control)
        }
        control.resumeScanning()
    }

    /// Answers the peer's Connection Parameters Request: accepted as asked when the Core allows it
    /// (the link is the peer's as much as ours, and a Herald phone asks for what its OS needs),
    /// refused with 0x3B Unacceptable Connection Parameters otherwise.
    mutating func answer(_ request: HCILERemoteConnectionParameterRequestEvent) {
        if request.isValid {
            control.send(HCILERemoteConnectionParameterRequestReply(accepting: request), tag: .connection)
        } else {
            control.send(HCILERemoteConnectionParameterRequestNegativeReply(handle: request.handle), tag: .connection)
        }
    }

    /// LE Connection Update Complete (Core 5.4 Vol 4 Part E 7.7.65.3): the link's new timing. A failed
    /// update leaves it as it was.
    mutating func connectionUpdated(_ u: HCILEConnectionUpdateCompleteEvent) {
        guard u.status == .success else { return }
        _ = connections.update(handle: u.handle) { link in
            link.timing = ConnectionTiming(interval: u.connectionInterval, latency: u.peripheralLatency,
                                           supervisionTimeout: u.supervisionTimeout)
        }
        retryPHYAfterProcedure(handle: u.handle)
    }

    /// LE Data Length Change (7.7.65.7): the PDU sizes now in use on the link, recorded and told.
    mutating func dataLengthChanged(_ d: HCILEDataLengthChangeEvent) {
        let length = LinkDataLength(maxTxOctets: d.maxTxOctets, maxTxTime: d.maxTxTime,
                                    maxRxOctets: d.maxRxOctets, maxRxTime: d.maxRxTime)
        guard connections.update(handle: d.handle, { $0.dataLength = length }) != nil else { return }
        counters.dataLengthChanges &+= 1
        counters.lastTxOctets = d.maxTxOctets
        counters.lastRxOctets = d.maxRxOctets
        app.stackDidChangeDataLength(handle: d.handle, length, now: now, control: &control)
        retryPHYAfterProcedure(handle: d.handle)
    }

    /// Asks the central of a link where we are peripheral for other connection parameters, with the
    /// L2CAP Connection Parameter Update Request (Core 5.4 Vol 3 Part A 4.20), which every central
    /// understands; the link layer's own request (Vol 6 Part B 5.1.7) needs both controllers to
    /// support it. False when this is no peripheral link, or a request is still unanswered.
    ///
    /// A server calls this when a client starts working it hard (streaming reads or notifications):
    /// each ATT round trip costs a connection event, and centrals connect at 30–50 ms by default.
    @discardableResult
    public mutating func requestConnectionParameters(handle: UInt16, intervalMin: UInt16, intervalMax: UInt16,
                                                     latency: UInt16 = 0, supervisionTimeout: UInt16) -> Bool {
        if !App.requestsConnectionParameters { Self.requestWithoutParameterRequests() }
        let n = now
        guard let request = connections.update(handle: handle, { link -> L2CAPConnectionParameterUpdateRequest? in
            guard link.role == .peripheral else { return nil }
            return link.signaling.makeParameterUpdateRequest(intervalMin: intervalMin, intervalMax: intervalMax,
                                                             latency: latency, timeout: supervisionTimeout, now: n)
        }) ?? nil else { return false }
        var pdu = FixedBytes<23>()
        request.write(to: &pdu)
        return control.sendL2CAP(handle: handle, channel: .leSignaling, payload: pdu.span)
    }

    /// The application said it never asks for connection parameters
    /// (`LEApplication.requestsConnectionParameters`), so no answer would be matched: stopped early.
    static func requestWithoutParameterRequests() -> Never {
        preconditionFailure("LEStack.requestConnectionParameters from an application whose requestsConnectionParameters is false")
    }

    /// The connection timing in use on `handle`; as the link came up when the application does not
    /// follow updates (`LEApplication.tracksConnectionTiming`).
    public func timing(handle: UInt16) -> ConnectionTiming? {
        connections[handle: handle]?.timing
    }

    /// The LL PDU sizes in use on `handle` (27 octets until a Data Length Update).
    public func dataLength(handle: UInt16) -> LinkDataLength? {
        connections[handle: handle]?.dataLength
    }

    // Not inlined: Disconnection Complete and a controller failure (`dropAllLinks`) both end links,
    // and inlined each carried the database's, credits' and queue's clean-up and the application's callback.
    @inline(never)
    mutating func linkDown(handle: UInt16, reason: HCIStatus) {
        if let i = connections.slot(of: handle) { database.resetLink(slot: i) }
        guard connections.discard(handle: handle) else { return }
        control.credits.close(handle: handle)
        control.acl.removeAll(handle: handle)
        updateInboundRoom()
        // Advertising held off at the inbound quota or with a full table resumes once a link has gone.
        if control.acceptsInboundLinks, !control.advertiserEnabled,
           let a = control.advertising, a.restartAfterConnection {
            control.send(HCILESetAdvertisingEnable(true), tag: .gap)
            control.advertiserEnabled = true
        }
        app.stackDidDisconnect(handle: handle, reason: reason, now: now, control: &control)
    }

    mutating func dropAllLinks(reason: HCIStatus) {
        for position in 0..<links {
            if let handle = connections.handle(atSlot: position) { linkDown(handle: handle, reason: reason) }
        }
    }
}
