import BluetoothHost

// The central's connections: which device to connect to next, links coming up and going down, and
// the failure back-off. The reference apps' `BLEReceiver` does the same in its task list (connect,
// read, disconnect, ignore devices that fail); where the schedule differs, see the README.
extension HeraldCentral {
    // MARK: Scheduling

    /// Why a device deserves a connection now (lower is more urgent) and when it was last heard,
    /// nil when it does not.
    mutating func urgency(of index: Int, now: UInt64) -> (urgency: Int, lastSeen: UInt64)? {
        guard let d = database.entries[index], d.kind != .receiveOnly, d.connectable, d.inboundLink == nil,
              !d.isIgnored(at: now), now &- d.lastSeen <= configuration.connectWindow,
              linkIndex(of: d.target) == nil else { return nil }
        if holdsBack(d, now: now) { return nil }
        // Retry a failed device only once an advert shows it is still there.
        if let failed = d.lastFailure, d.lastSeen <= failed { return nil }
        if d.immediateSendPending { return (0, d.lastSeen) }
        if needsPayload(payloadTime: d.payloadTime, now: now) { return (d.kind == .herald ? 1 : 2, d.lastSeen) }
        return nil
    }

    mutating func needsPayload(payloadTime: UInt64?, now: UInt64) -> Bool {
        guard let t = payloadTime else { return true }
        return now &- t >= configuration.payloadUpdateInterval
    }

    // The lookups below are `mutating` although they change nothing, like the device database's:
    // a read-only method on a value this large (the database, and a GATT client and a payload per
    // link) gets a copy of the whole central when the caller holds it mutably, which on a
    // microcontroller put 5.6 KB frames on the stack of every caller with 4 links.
    // Internal, like `slots`: a link is named by its HCI handle outside the central, and the entry
    // it holds here is this table's own business.

    mutating func linkIndex(of target: TargetIdentifier) -> Int? {
        for i in 0..<links where slots[i]?.target == target { return i }
        return nil
    }

    mutating func linkIndex(handle: UInt16) -> Int? {
        for i in 0..<links where slots[i]?.handle == handle { return i }
        return nil
    }

    /// For the application and tests; the central counts with `countOpenLinks` (see above).
    public var openLinks: Int {
        var n = 0
        for i in 0..<links where slots[i] != nil { n += 1 }
        return n
    }

    mutating func countOpenLinks() -> Int {
        var n = 0
        for i in 0..<links where slots[i] != nil { n += 1 }
        return n
    }

    /// Starts the most urgent connection, if any; immediate send first, then new Herald devices,
    /// then Apple devices to check, the most recently heard first within each.
    public mutating func schedule<C: HeraldCentralControl>(now: UInt64, control: inout C) {
        guard isOn, pending == nil else { return }
        if let until = waitsForRoomUntil {
            guard now >= until else { return }
            waitsForRoomUntil = nil
        }
        var best: (index: Int, urgency: Int, lastSeen: UInt64)?
        for i in 0..<devices {
            guard let (u, seen) = urgency(of: i, now: now) else { continue }
            if let b = best, u > b.urgency || (u == b.urgency && seen <= b.lastSeen) { continue }
            best = (i, u, seen)
        }
        guard let chosen = best?.index, let address = database.entries[chosen]?.address else { return }
        if countOpenLinks() == links {
            makeRoom(now: now, control: &control)
            return
        }
        if control.requestConnection(to: address, now: now, timeout: configuration.connectionTimeout) {
            pending = HeraldConnectionAttempt(target: database.targetIdentifier(at: chosen), address: address)
        }
    }

    /// At the simultaneous connection limit the oldest link we made makes way (unless one is already
    /// closing, which will free a slot), once it has been up `firstAnswerTimeout`: a Herald link's
    /// work takes well under a second, so a younger one is left to finish (dropped, a link 49 ms old
    /// lost its read and cost a reconnection: Zephyr's radio, bench-wearables).
    mutating func makeRoom<C: HeraldCentralControl>(now: UInt64, control: inout C) {
        var oldest: (slot: Int, connectedAt: UInt64)?
        for i in 0..<links {
            guard let l = slots[i], l.origin == .ours else { continue }
            if l.isClosing { return }
            guard now &- l.connectedAt >= configuration.firstAnswerTimeout else { continue }
            if let o = oldest, o.connectedAt <= l.connectedAt { continue }
            oldest = (i, l.connectedAt)
        }
        if let o = oldest { close(link: o.slot, dropping: true, control: &control) }
    }

    /// Asks for link `slot`'s disconnection unless already asked; `dropping` when it makes way for
    /// a newer link (its end is then no failure).
    mutating func close<C: HeraldCentralControl>(link slot: Int, dropping: Bool = false, control: inout C) {
        guard let handle = slots[slot]?.handle, slots[slot]?.isClosing == false else { return }
        slots[slot]?.closing = dropping ? .dropped : .requested
        control.requestDisconnection(handle: handle)
    }

    // MARK: Links

    /// A link came up. For our pending attempt, or a link a peer made whose payload we need,
    /// returns the first GATT step of its procedure.
    public mutating func didConnect<C: HeraldCentralControl>(handle: UInt16, peer: DeviceAddress, isCentral: Bool,
                                                             now: UInt64, control: inout C) -> HeraldGATTStep? {
        // A read opened here pauses the scan (`readPausingScan`).
        defer { updateScan(now: now, control: &control) }
        guard isCentral else { return peerDidConnect(handle: handle, peer: peer, now: now) }
        // Only our own LE Create Connection makes us central, one at a time (Core 5.4 Vol 4 Part E
        // 7.8.12). The stack ends an attempt with a central link from its address alone
        // (`LEStack.attempt(endedBy:)`): a central link from another address, or with no attempt
        // under way, is the late link of an attempt the stack already ended (a cancel the controller
        // never confirmed). No procedure would use it and nobody would close it: it is closed now
        // (0x13) and counted.
        guard let p = pending, p.address.address == peer.address else {
            unownedLinksClosed &+= 1
            control.requestDisconnection(handle: handle)
            return nil
        }
        pending = nil
        guard let index = database.index(of: p.target), let slot = freeLinkSlot(),
              let device = database.entries[index] else {
            control.requestDisconnection(handle: handle)
            return nil
        }
        let sharingDue = device.lastShared.map { now &- $0 >= configuration.sharingInterval } ?? true
        let procedure = HeraldCentralProcedure(wantsImmediateSend: device.immediateSendPending,
                                               wantsPayload: needsPayload(payloadTime: device.payloadTime, now: now),
                                               wantsSharing: sharingDue,
                                               readsPayloadFirst: configuration.readsPayloadByUUID)
        let step = open(HeraldCentralLink(handle: handle, target: device.target, connectedAt: now, origin: .ours,
                                          procedure: procedure, clientMTU: clientMTU), at: slot)
        // The next due device's attempt starts now, while this link is read: no advert will call
        // the scheduler, as the read pauses the scan (`readPausingScan`).
        schedule(now: now, control: &control)
        return step
    }

    /// A peer connected to us: no second link to the same device is made while it lasts (two links
    /// between one pair of devices help nobody, and crossing attempts stall). If it is a Herald
    /// device whose payload we need, read it over this link instead.
    mutating func peerDidConnect(handle: UInt16, peer: DeviceAddress, now: UInt64) -> HeraldGATTStep? {
        guard let i = database.index(of: peer) else {
            for s in 0..<links where inboundStrangers[s] == nil {
                inboundStrangers[s] = (handle, peer)
                break
            }
            return nil
        }
        database.entries[i]?.inboundLink = handle
        return readOverInboundLink(handle: handle, device: i, now: now)
    }

    /// Reads device `index`'s payload over the link it made to us, if it is a Herald device whose
    /// payload we need; returns the first GATT step. Its link is the peer's: its end is no failure.
    mutating func readOverInboundLink(handle: UInt16, device index: Int, now: UInt64) -> HeraldGATTStep? {
        guard let d = database.entries[index], d.hasHeraldService == true || d.kind == .herald,
              needsPayload(payloadTime: d.payloadTime, now: now), let slot = freeSlotForRead(over: d.address) else { return nil }
        let procedure = HeraldCentralProcedure(wantsImmediateSend: d.immediateSendPending, wantsPayload: true, wantsSharing: false,
                                               readsPayloadFirst: configuration.readsPayloadByUUID)
        return open(HeraldCentralLink(handle: handle, target: d.target, connectedAt: now, origin: .peers,
                                      procedure: procedure, clientMTU: clientMTU), at: slot)
    }

    /// Files `link` at `slot` and starts its procedure; returns the first step.
    mutating func open(_ link: consuming HeraldCentralLink, at slot: Int) -> HeraldGATTStep? {
        slots[slot] = link
        return slots[slot]?.procedure.start()
    }

    /// A device just filed may be a peer that connected to us before we heard it: its link is
    /// marked on the device, so no second link is made, and its payload is read over that link now
    /// (returned: the link and the first GATT step), as for a peer we knew when it connected. Waiting
    /// instead let the link end with the peer's own read, and the crossing-connection hold then
    /// delayed our first read of it by seconds (`Tools/bench/phases.py`).
    mutating func adoptInboundStranger(_ address: DeviceAddress, device index: Int, now: UInt64)
        -> (handle: UInt16, step: HeraldGATTStep)? {
        var read: (handle: UInt16, step: HeraldGATTStep)?
        for s in 0..<links {
            guard let stranger = inboundStrangers[s], stranger.address.address == address.address else { continue }
            database.entries[index]?.inboundLink = stranger.handle
            inboundStrangers[s] = nil
            if read == nil, let step = readOverInboundLink(handle: stranger.handle, device: index, now: now) {
                read = (stranger.handle, step)
            }
        }
        return read
    }

    mutating func freeLinkSlot() -> Int? {
        for i in 0..<links where slots[i] == nil { return i }
        return nil
    }

    /// A free slot for a read over the link `peer` made to us. While an attempt of ours to another
    /// device is under way, its link will need a slot: the read takes one only if another stays
    /// free, and otherwise waits for the attempt's end (`didFailToConnect`) or a link's
    /// (`didDisconnect`). Taking the last one closed the attempt's link the moment it came up,
    /// and a peer that never answered that LL_TERMINATE_IND kept it for the whole supervision
    /// timeout (issue 39's bench, `docs/crowd-issue-39.md`, "36 attempts on one peer"). An attempt to
    /// `peer` itself will bring no link: the stack cancels it, as the peer linked to us first.
    mutating func freeSlotForRead(over peer: DeviceAddress) -> Int? {
        guard let slot = freeLinkSlot() else { return nil }
        guard let p = pending, p.address.address != peer.address else { return slot }
        var free = 0
        for i in 0..<links where slots[i] == nil { free += 1 }
        return free > 1 ? slot : nil
    }

    /// Our connection attempt failed or timed out. An attempt the stack cancelled itself (the peer
    /// connected to us first: 0x0B; our own address change: 0x44) is no failure of the peer's. The
    /// next attempt waits for the next advert: the stack has resumed scanning, and starting one at
    /// once would keep the scanner paused through attempt after attempt. The slot kept for the
    /// attempt's link goes to a peer linked to us whose payload we need (returned: that link and
    /// the first GATT step; `freeSlotForRead`).
    @discardableResult
    public mutating func didFailToConnect<C: HeraldCentralControl>(to peer: DeviceAddress, status: HCIStatus = .connectionTimeout,
                                                                   now: UInt64, control: inout C)
        -> (handle: UInt16, step: HeraldGATTStep)? {
        // The stack has one attempt at a time: its failure ends ours, whichever address it names.
        let attempt = pending
        pending = nil
        noteFailedAttempt(attempt, to: peer, status: status, now: now)
        let read = readOverWaitingInboundLink(now: now)
        updateScan(now: now, control: &control)
        return read
    }

    /// What a failed attempt says of its device: a hold, a wait for room, or a failure counted.
    mutating func noteFailedAttempt(_ attempt: HeraldConnectionAttempt?, to peer: DeviceAddress, status: HCIStatus, now: UInt64) {
        guard let p = attempt, p.address == peer else { return }
        guard status != .connectionAlreadyExists else {
            holdForLingeringLink(p.target, now: now)
            return
        }
        guard status != .operationCancelledByHost else { return }
        // The stack had no room for the link (its table or credits full, with links peers made to
        // us): no failure of the peer's, and another attempt now would only be refused again, so the
        // next waits for a link to end (`didDisconnect`), or `connectionTimeout` at most.
        guard status != .connectionRejectedLimitedResources else {
            waitsForRoomUntil = now &+ configuration.connectionTimeout
            return
        }
        if let i = database.index(of: p.target) {
            recordFailure(at: i, toEstablish: status == .connectionFailedToEstablish, now: now)
        }
    }

    /// The controller refused our LE Create Connection 0x0B: it has a link to the address already.
    /// When the peer linked to us first (the stack's own cancel), we read over that link and need no
    /// hold. Otherwise it is a link of ours closed at once (no free slot for it, or the late link of
    /// an ended attempt) whose Disconnection Complete has not come: a peer that never answers the
    /// LL_TERMINATE_IND keeps it for the whole supervision timeout, and retrying at each advert met
    /// the same refusal 35 times in 2.4 s (issue 39's bench, a wearable's capture). So the device
    /// waits for a link we do not track to end, or `lingeringLinkHold` at most.
    mutating func holdForLingeringLink(_ target: TargetIdentifier, now: UInt64) {
        guard let i = database.index(of: target), database.entries[i]?.inboundLink == nil else { return }
        heldForLingeringLink = target
        hold(device: i, for: Self.lingeringLinkHold, now: now)
    }

    /// The supervision timeout the stack asks for on our links (`StackControl.connect`, 0x00C8: 2 s).
    /// A literal: reading a constant of `LEStackTiming` here made the Embedded Swift build of the
    /// core fail (`_ContiguousArrayStorage<UInt>` in -no-allocations mode, 2026-11-30).
    public static var lingeringLinkHold: UInt64 { 2_000 }

    /// One more failed connection or read: the retry waits a random delay that grows with the
    /// failures in a row (`HeraldCentral+Crowd`), and `maximumFailures` in a row start the next
    /// back-off round (`HeraldDeviceDatabase.backOff`: 1, 2, 4, 8, 16, 32 min, then given up).
    /// `toEstablish`: a link of ours that failed to be established (0x3E). Such a failure starts the
    /// round only at `maximumFailuresToEstablish` in a row (`HeraldCentral+Crowd` says why); any other
    /// starts it at `maximumFailures`. So a round comes after 10 attempts at most.
    mutating func recordFailure(at index: Int, toEstablish: Bool = false, now: UInt64) {
        guard let failures = database.entries[index]?.consecutiveFailures else { return }
        database.entries[index]?.consecutiveFailures = failures + 1
        database.entries[index]?.lastFailure = now
        database.entries[index]?.lastUpdated = now
        // A lost race's window does not grow: its winner has left the contest (`HeraldCentral+Crowd`).
        let window = toEstablish ? retryWindow(failures: 1) : retryWindow(failures: failures + 1)
        hold(device: index, for: spread(window), now: now)
        let limit = toEstablish ? configuration.maximumFailuresToEstablish : configuration.maximumFailures
        if failures + 1 >= limit { database.backOff(at: index, now: now) }
    }

    /// The owner is closing the link itself (e.g. after an ATT timeout): no second request.
    public mutating func linkWillClose(handle: UInt16) {
        guard let s = linkIndex(handle: handle), slots[s]?.isClosing == false else { return }
        slots[s]?.closing = .requested
    }

    /// A link went down. The contact event is untouched: it ends at the last RSSI, not here. A link
    /// we made whose work was not finished, and that we did not drop ourselves, is a failure. The
    /// slot it frees goes first to a peer still linked to us whose payload we need (returned: that
    /// link and the first GATT step), then to the scheduler. `reason` 0x3E: the link failed to be
    /// established (Core 5.4 Vol 6 Part B 4.5.2), which `recordFailure` counts apart.
    @discardableResult
    public mutating func didDisconnect<C: HeraldCentralControl>(handle: UInt16, reason: HCIStatus, now: UInt64,
                                                                control: inout C)
        -> (handle: UInt16, step: HeraldGATTStep)? {
        // Any link's end may be the room a refused attempt waited for; the next attempt waits a few
        // connection intervals all the same (`attemptDelayAfterDisconnection`).
        let settle = configuration.attemptDelayAfterDisconnection
        waitsForRoomUntil = settle > 0 ? now &+ settle : nil
        for i in 0..<devices where database.entries[i]?.inboundLink == handle { database.entries[i]?.inboundLink = nil }
        for s in 0..<links where inboundStrangers[s]?.handle == handle { inboundStrangers[s] = nil }
        if linkIndex(handle: handle) == nil, let t = heldForLingeringLink {
            // A link we closed untracked has ended; it may be the one the refused device waited for.
            heldForLingeringLink = nil
            if let i = database.index(of: t) { database.entries[i]?.ignoreUntil = now }
        }
        if let slot = linkIndex(handle: handle) {
            let unfinished = slots[slot]?.procedure.isFinished == false && slots[slot]?.closing != .dropped
                && slots[slot]?.origin == .ours
            let target = slots[slot]?.target
            slots[slot] = nil
            if outgoingLink == slot { outgoingLink = nil }
            if unfinished, let t = target, let i = database.index(of: t) {
                recordFailure(at: i, toEstablish: reason == .connectionFailedToEstablish, now: now)
            }
        }
        let inboundRead = readOverWaitingInboundLink(now: now)
        schedule(now: now, control: &control)
        updateScan(now: now, control: &control)
        return inboundRead
    }

    /// A peer linked to us whose payload we need, and which no slot of ours is reading yet (all
    /// were taken when it connected or was first heard): read it over its link now, before its own
    /// work there ends and the link with it.
    mutating func readOverWaitingInboundLink(now: UInt64) -> (handle: UInt16, step: HeraldGATTStep)? {
        for i in 0..<devices {
            guard let d = database.entries[i], let handle = d.inboundLink, linkIndex(handle: handle) == nil,
                  linkIndex(of: d.target) == nil, let step = readOverInboundLink(handle: handle, device: i, now: now)
            else { continue }
            return (handle, step)
        }
        return nil
    }
}
