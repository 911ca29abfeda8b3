/// Everything above HCI for LE links: connections, ACL credits, L2CAP fixed channels, the ATT server
/// and GATT database, and the application. It is the `HCIHost`'s delegate.
///
/// Sized entirely by generic parameters: `links` simultaneous connections (Zephyr's hci_uart
/// defaults to a handful and allows 16), and the GATT database's `attributes` and value `values` bytes.
public struct LEStack<App: LEApplication, let links: Int, let attributes: Int, let values: Int>: HostDelegate {
    public var app: App
    public var control = StackControlOf<App.ControlBuffers>()
    /// The GATT database, its handle layout the application's (`LEApplication.GATTHandles`).
    public typealias Database = GATTDatabaseOf<attributes, values, links, App.GATTHandles>
    public var database: Database
    public var server: ATTServer
    public typealias PDU = App.LinkBuffers.PDU
    public internal(set) var connections =
        LinkTable<links, App.LinkBuffers.Reassembler, LinkState<App.PrepareQueue, PDU>>()
    public internal(set) var counters = App.StackCounters()
    /// Centrals refused for a while after their silent link was dropped (`InboundLinkPolicy`), in
    /// the application's choice of list (`LEApplication.RefusedCentrals`).
    public internal(set) var silentCentrals = App.RefusedCentrals()
    public private(set) var isReady = false
    /// What LE Set Data Length asks for on each new link, when the controller supports the Data
    /// Length Update procedure; nil otherwise (see `hostDidBecomeReady`).
    public private(set) var linkDataLength: (octets: UInt16, time: UInt16)?
    /// The most LE Set Data Length asks for (the largest LE 1M PDU unless set lower); 27 octets or
    /// fewer: links are left at the initial length and nothing is asked.
    public var requestedLinkDataLength: (octets: UInt16, time: UInt16) = (251, 2120)
    /// Whether LE Set PHY asks each new link for the LE 2M PHY (see `hostDidBecomeReady`).
    public internal(set) var asks2MPHY = false
    /// The time of the call in progress; HCI callbacks do not carry it.
    var now: UInt64 = 0

    public init(app: App, database: Database, maximumMTU: UInt16 = ATTMTU.defaultMaximum) {
        // A Database Hash the server is built not to compute would be unreadable: a programming
        // error in how the database was made (see GATTServerFeatures.databaseHash).
        precondition(database.databaseHashHandle == 0 || App.serverFeatures.databaseHash,
                     "GATTDatabase has a Database Hash but the application's serverFeatures leave it out")
        precondition(App.inboundLinks.refuseSilentFor == 0 || App.RefusedCentrals.capacity > 0,
                     "the application's inboundLinks refuse silent centrals but its RefusedCentrals has no room")
        self.app = app
        self.database = database
        self.server = ATTServer(maximumMTU: Self.mtu(maximumMTU))
    }

    /// `maximumMTU` within what the application's link buffers hold (`LEApplication.LinkBuffers`).
    static func mtu(_ maximumMTU: UInt16) -> UInt16 {
        precondition(PDU.capacity >= Int(ATTMTU.minimum), "LinkBuffers below the minimum ATT_MTU of 23")
        // A response that can never be queued would be held for ever: the queue takes one whole PDU
        // from each link within its per-link share (three quarters).
        let acl = App.ControlBuffers.ACL.self
        precondition(acl.footprint(payloadLength: PDU.capacity) <= acl.totalOctets - acl.totalOctets / 4,
                     "ControlBuffers' ACL queue holds no whole PDU of LinkBuffers")
        return UInt16(min(Int(maximumMTU), PDU.capacity))
    }

    // MARK: HostDelegate

    public mutating func hostDidBecomeReady(_ info: ControllerInfo) {
        if info.aclBuffersShared {
            control.credits.configure(leDataLength: 0, leTotalPackets: 0, sharedDataLength: info.aclDataPacketLength,
                                      sharedTotalPackets: info.aclDataPacketCount)
        } else {
            control.credits.configure(leDataLength: info.aclDataPacketLength,
                                      leTotalPackets: UInt8(clamping: info.aclDataPacketCount), sharedDataLength: 0, sharedTotalPackets: 0)
        }
        control.ownAddressType = info.addressType == .publicDevice ? .publicAddress : .randomAddress
        // The largest LE 1M PDU, 251 octets in 2120 µs (Core 5.4 Vol 6 Part B 4.5.10), within what
        // the controller supports. Controllers do not start the Data Length Update on their own
        // (Zephyr's does not), so without asking, links stay at 27 octets whatever the buffers.
        // LE Set Data Length is octet 33 bit 6 of the supported commands (Core 5.4 Vol 4 Part E 6.27).
        if info.leFeatures?.dataPacketLengthExtension == true, info.supports(octet: 33, bit: 6),
           let max = info.maximumDataLength, requestedLinkDataLength.octets > 27 {
            linkDataLength = (min(requestedLinkDataLength.octets, max.supportedMaxTxOctets),
                              min(requestedLinkDataLength.time, max.supportedMaxTxTime))
        } else {
            linkDataLength = nil
        }
        // LE Set PHY is octet 35 bit 6 (Core 5.4 Vol 4 Part E 6.27); the default PHY preference alone
        // moves no link: Zephyr's controller, like others, starts no PHY Update of its own.
        asks2MPHY = App.asksForLE2MPHY && info.prefers2MPHY && info.supports(octet: 35, bit: 6)
        isReady = true
        let requests = control.advertisingRequests
        app.stackDidBecomeReady(info, now: now, control: &control)
        // Advertising asked for before a restart is resumed: the controller forgot it in Reset. Not
        // when the application just (re)configured advertising itself: the intent it set is already
        // queued, and queueing it twice overflows the 8-command queue and loses the final enable.
        // Unchanged requests mean `control.advertising` is still what it was before the callback
        // (only `startAdvertising` and `stopAdvertising` set it, and each counts), so it is read
        // after the callback rather than copied before it.
        if control.advertisingRequests == requests, let resume = control.advertising { control.startAdvertising(resume) }
    }

    public mutating func hostControllerDidFail(_ failure: ControllerFailure) {
        isReady = false
        dropAllLinks(reason: .hardwareFailure)
        // Keeps `control.advertising`: it is resumed once the controller is ready again.
        control.reset()
        app.stackControllerDidFail(failure, now: now, control: &control)
    }

    // Not inlined (nor the advertising report below): the HCI host calls each from two places
    // (Command Complete and Command Status; legacy and extended reports), and inlining copied the
    // application's handling into both.
    @inline(never)
    public mutating func hostCommandDidComplete(tag: CommandTag, opcode: HCIOpcode, status: HCIStatus, returnParameters: Span<UInt8>) {
        // A refused LE Create Connection completes with Command Status; nothing else will follow.
        if App.connectsAsCentral, opcode == HCILECreateConnection.opcode, status != .success, let c = control.connecting {
            endAttempt(c, .failed(status))
            return
        }
        // A controller that lists LE Set Data Length but does not know it (Bumble's) is asked no more.
        if opcode == HCILESetDataLength.opcode, status == .unknownCommand { linkDataLength = nil }
        // Only an application that asks for the LE 2M PHY sends LE Set PHY (`LEStack+PHY`).
        if App.asksForLE2MPHY, opcode == HCILESetPHY.opcode { setPHYAnswered(status) }
        if tag == .gap || tag == .connection { return }
        app.stackCommandDidComplete(tag: tag, opcode: opcode, status: status, returnParameters: returnParameters, control: &control)
    }

    public mutating func hostCommandDidTimeOut(tag: CommandTag, opcode: HCIOpcode) {
        // A Create Connection the controller never acknowledged: the attempt is over.
        if App.connectsAsCentral, opcode == HCILECreateConnection.opcode, let c = control.connecting {
            endAttempt(c, .failed(.connectionTimeout))
            return
        }
        if App.asksForLE2MPHY, opcode == HCILESetPHY.opcode { setPHYTimedOut() }
        app.stackCommandDidTimeOut(tag: tag, opcode: opcode, control: &control)
    }

    public static var receivesAdvertisingReports: Bool { App.scans }

    public static var initiatesConnections: Bool { App.connectsAsCentral }
    public static var receivesPHYUpdates: Bool { App.asksForLE2MPHY || App.tracksPHYUpdates }
    public static var recordsInputDrops: Bool { App.recordsInputDrops }
    /// A data length change is also what a central's LE Set PHY waits for (`LEStack+PHY`).
    public static var receivesDataLengthChanges: Bool { App.asksForLE2MPHY || App.tracksDataLengthChanges }
    /// The end of a connection update is also when a central's LE Set PHY held back for it is retried
    /// (`LEStack+PHY`).
    public static var receivesConnectionUpdates: Bool { App.asksForLE2MPHY || App.tracksConnectionTiming }
    public static var probesLiveness: Bool { App.probesControllerLiveness }

    @inline(never)
    public mutating func hostDidReceive(advertisingReport: borrowing AdvertisingReport) {
        app.stackDidReceive(advertisingReport: advertisingReport, now: now, control: &control)
    }

    // Each event arrives parsed (`HCIHost` is the one place events are parsed). The enhanced
    // connection events' extra fields (resolvable private addresses) are not used.
    public mutating func hostDidReceive(connectionComplete c: HCILEConnectionCompleteEvent) { linkUp(c) }

    public mutating func hostDidReceive(disconnectionComplete d: HCIDisconnectionCompleteEvent) {
        guard d.status == .success else { return }
        linkDown(handle: d.handle, reason: d.reason)
    }

    public mutating func hostDidReceive(connectionUpdateComplete u: HCILEConnectionUpdateCompleteEvent) { connectionUpdated(u) }

    public mutating func hostDidReceive(remoteConnectionParameterRequest r: HCILERemoteConnectionParameterRequestEvent) { answer(r) }

    public mutating func hostDidReceive(dataLengthChange d: HCILEDataLengthChangeEvent) { dataLengthChanged(d) }

    public mutating func hostDidReceive(phyUpdateComplete u: HCILEPHYUpdateCompleteEvent) { phyUpdated(u) }

    public mutating func hostDidReceive(completedPackets: borrowing HCINumberOfCompletedPacketsEvent) {
        control.credits.apply(completedPackets)
    }

    /// What the stack does not act on goes to the application as it came (`LEApplication.stackDidReceive(event:)`).
    public mutating func hostDidReceive(event: borrowing HCIEventPacket) {
        app.stackDidReceive(event: event, control: &control)
    }

    public mutating func hostDidReceive(acl: Span<UInt8>) {
        guard let packet = try? HCIACLDataPacket(parsing: acl) else {
            counters.malformedACL &+= 1
            return
        }
        // The reassembled PDU borrows the link's buffer; copy it (at most one PDU of the
        // application's `LinkBuffers`) so the layers above can change the link while handling it.
        var pdu = PDU()
        var channel = L2CAPChannelID.null
        var summary: ConnectionSummary?
        let outcome = connections.receive(packet) { _, s, ch, payload in
            // Appended where it lies: `PDU(payload)` built a second buffer and copied it over.
            pdu.append(contentsOf: payload)
            channel = ch
            summary = s
        }
        guard case .delivered = outcome, let link = summary else { return }
        pdu.withSpan { deliver(link: link, channel: channel, payload: $0) }
    }

    // MARK: Timers

    /// How long after LE Create Connection Cancel the stack waits for the controller's LE Connection
    /// Complete before it reports the attempt failed on its own.
    public static var cancelGrace: UInt64 { LEStackTiming.cancelGrace }

    /// The earliest timer of the links, the attempt and the application. A `mutating get` so it reads
    /// in place (as `applicationDeadlineInPlace`): through a plain getter the optimiser handed it a
    /// copy of the stack, and it the application a copy of itself, on every turn of a main loop:
    /// 186 KB of memmove a turn in `herald wearable`, 20 % of its CPU in a crowd (perf,
    /// docs/crowd-issue-39.md); on the firmware the whole stack in the loop's frame.
    public var nextDeadline: UInt64? { mutating get {
        var d: UInt64? = app.applicationDeadlineInPlace()
        func take(_ t: UInt64?) { if let t { d = min(d ?? .max, t) } }
        if let c = control.connecting {
            if !App.connectsAsCentral { Self.connectWithoutCentralRole() }
            take(c.deadline)
        }
        let idleBound = App.inboundLinks.idleBound
        for position in 0..<links {
            // Only occupied positions, and the bearer read in place: `if let link = entries[position]`
            // copied the link on every turn of the main loop. The inbound links' idle bound is taken in
            // the same loop: a getter of its own on `self` had the host build (-O) rebuild a copy of the
            // whole stack to call it, twice a turn (perf, docs/crowd-issue-39.md).
            guard connections.isOccupied(position) else { continue }
            take(connections.entries[position].extra.bearer.nextDeadline)
            if App.asksForLE2MPHY, connections.entries[position].phyRequestPending { take(connections.entries[position].phyRequestAt) }
            // When an inbound link falls idle (`dropIdleLinks`).
            if let idleBound, connections.entries[position].role == .peripheral, !connections.entries[position].extra.closing {
                take(connections.entries[position].extra.lastHeard &+ idleBound)
            }
        }
        return d
    } }

    /// The application said it never connects as central (`LEApplication.connectsAsCentral`), so
    /// nothing here would time its attempt out or report it: a programming error, stopped early.
    static func connectWithoutCentralRole() -> Never {
        preconditionFailure("StackControl.connect from an application whose connectsAsCentral is false")
    }

    mutating func tick(now: UInt64) {
        self.now = now
        if App.connectsAsCentral, let c = control.connecting, now >= c.deadline {
            switch c.phase {
            case .initiating:
                control.cancelAttempt(reason: .connectionTimeout, now: now)
            case .cancelling(let reason):
                // The controller should end a cancelled attempt with LE Connection Complete (Unknown
                // Connection Identifier, Core 5.4 Vol 4 Part E 7.8.13); some (Bumble's virtual one)
                // never do. Without this the attempt would stay open and block every later connect.
                endAttempt(c, .failed(reason))
            }
        }
        dropIdleLinks(now: now)
        for position in 0..<links {
            guard connections.isOccupied(position) else { continue }
            if server.poll(bearer: &connections.entries[position].extra.bearer, now: now) == .disconnect {
                control.disconnect(handle: connections.entries[position].handle)
            }
            if App.asksForLE2MPHY, connections.entries[position].phyRequestPending, now >= connections.entries[position].phyRequestAt {
                sendPendingPHYRequest(handle: connections.entries[position].handle)
            }
        }
        if let d = app.applicationDeadlineInPlace(), now >= d { app.stackTimerFired(now: now, control: &control) }
    }
}

// MARK: In-place construction

extension LEStack {
    /// Fills `le`, memory that holds no value yet, one stored property at a time, each built in a
    /// call of its own: `init` composes the whole value in a temporary and copies it out, which on
    /// firmware costs the value's size again in stack at start-up (BluetoothStack+InPlace.swift).
    /// `makeApp` initialises the application in its place.
    @inline(never)
    static func initialize(_ le: inout Self, database: Database,
                           maximumMTU: UInt16, app makeApp: (UnsafeMutablePointer<App>) -> Void) {
        copyInPlace(&le.database, database)
        initialize(&le, databaseInPlace: maximumMTU, app: makeApp)
    }

    /// `initialize(_:database:maximumMTU:app:)` for a stack whose `database` is already in place.
    @inline(never)
    static func initialize(_ le: inout Self, databaseInPlace maximumMTU: UInt16,
                           app makeApp: (UnsafeMutablePointer<App>) -> Void) {
        precondition(le.database.databaseHashHandle == 0 || App.serverFeatures.databaseHash,
                     "GATTDatabase has a Database Hash but the application's serverFeatures leave it out")
        withUnsafeMutablePointer(to: &le.app) { makeApp($0) }
        le.control.initializeInPlace()
        le.server = ATTServer(maximumMTU: mtu(maximumMTU))
        le.connections.initializeInPlace()
        le.counters = App.StackCounters()
        precondition(App.inboundLinks.refuseSilentFor == 0 || App.RefusedCentrals.capacity > 0,
                     "the application's inboundLinks refuse silent centrals but its RefusedCentrals has no room")
        le.silentCentrals = App.RefusedCentrals()
        le.isReady = false
        le.linkDataLength = nil
        le.requestedLinkDataLength = (251, 2120)
        le.asks2MPHY = false
        le.now = 0
    }
}
