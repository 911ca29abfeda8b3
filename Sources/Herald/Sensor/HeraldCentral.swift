import BluetoothHost

/// Where the central's decisions go. `StackControl` conforms (see below); tests record them.
public protocol HeraldCentralControl {
    /// Starts a connection attempt that fails on its own after `timeout` ms; false when one is
    /// already under way (the controller allows one LE Create Connection, Core 5.4 Vol 4 Part E 7.8.12).
    mutating func requestConnection(to peer: DeviceAddress, now: UInt64, timeout: UInt64) -> Bool
    mutating func requestDisconnection(handle: UInt16)
    /// Active scanning on or off (active, so scan responses with the second Herald UUID arrive).
    mutating func requestScanning(_ on: Bool)
}

extension StackControl: HeraldCentralControl {
    public mutating func requestConnection(to peer: DeviceAddress, now: UInt64, timeout: UInt64) -> Bool {
        connect(to: peer, now: now, timeout: timeout)
    }
    public mutating func requestDisconnection(handle: UInt16) { disconnect(handle: handle) }
    public mutating func requestScanning(_ on: Bool) {
        if on { startScanning(active: true, interval: HeraldCentral<1, 1>.scanInterval) } else { stopScanning() }
    }
}

/// The sensor's timing (ms). Defaults follow the Herald reference apps.
public struct HeraldSensorConfiguration: Sendable {
    /// Our own connection timeout (`StackControl.connect` cancels the attempt then).
    public var connectionTimeout: UInt64 = 8_000
    /// A payload older than this is read again. Default: one Simple payload period (86 400 s / 240).
    public var payloadUpdateInterval: UInt64 = 360_000
    /// Payload sharing to one peer at most this often.
    public var sharingInterval: UInt64 = 15_000
    /// Payloads of devices seen within this window are shared.
    public var sharingWindow: UInt64 = 300_000
    /// Immediate send to all goes to Herald devices seen within this window.
    public var immediateSendWindow: UInt64 = 60_000
    /// Purge runs this often and removes devices out of range for `outOfRange`.
    public var purgeInterval: UInt64 = 60_000
    public var outOfRange: UInt64 = 3_600_000
    /// Consecutive connection failures before a device backs off (`HeraldDeviceDatabase.backOff`).
    public var maximumFailures = 5
    /// Only devices heard this recently are connected to (an old advert means the peer has gone).
    public var connectWindow: UInt64 = 10_000
    /// Scanning duty cycle: nil scans continuously; otherwise scan `scanWindow` ms at the start of
    /// every `scanPeriod` (at most 30 s, so every device is heard at least once every 30 s).
    public var scanWindow: UInt64? = nil
    public var scanPeriod: UInt64 = 30_000
    public init() {}
}

/// A central connection the sensor made.
public struct HeraldCentralLink {
    public var handle: UInt16
    public var target: TargetIdentifier
    public var connectedAt: UInt64
    /// We asked for the disconnection (work done, or dropped for a newer link).
    public var closing = false
    /// Dropped at the connection limit: its work stops and its end is not the peer's failure.
    public var dropped = false
    /// The peer connected to us: we read over its link (GATT roles are independent of link roles,
    /// Core 5.4 Vol 3 Part G 2.2) but leave closing it to the peer, and its end is no failure of ours.
    public var inbound = false
    public var procedure: HeraldCentralProcedure
    var payloadDelivered = false
}

/// The Herald central, sans-I/O: a device database in fixed capacity plus the decisions of the
/// scheduler — report every advert's RSSI, connect to each new Herald device (and each Apple device
/// that may hide the service), read its payload, close as soon as the work is done, ignore devices
/// that fail, share payloads with iOS peers, and send immediate data first.
public struct HeraldCentral<let devices: Int, let links: Int> {
    /// Scan interval = window, 100 ms (units of 0.625 ms, Core 5.4 Vol 4 Part E 7.8.10).
    public static var scanInterval: UInt16 { 0x00A0 }

    public var configuration: HeraldSensorConfiguration
    public var database = HeraldDeviceDatabase<devices>()
    public internal(set) var slots: InlineArray<links, HeraldCentralLink?>
    /// The connection attempt under way.
    public internal(set) var pending: (target: TargetIdentifier, address: DeviceAddress, since: UInt64)?
    public internal(set) var isOn = false
    public internal(set) var isScanning = false
    /// Links peers made to us before we heard them advertise (handle, their address): once an advert
    /// files them, their device is marked as connected to us, so that we do not make a second link
    /// to a peer already linked to us (two links between one pair of devices help nobody, and
    /// Bumble's virtual radio cannot keep them apart).
    public internal(set) var inboundStrangers: InlineArray<links, (handle: UInt16, address: DeviceAddress)?>
    /// The address our own advertiser uses now and since when (nil when we do not advertise): who
    /// connects first when two devices find each other at once, and which devices have probably
    /// changed address with us (`holdsBack`, HeraldCentral+Rotation).
    public internal(set) var advertisedAddress: (address: BDAddress, since: UInt64)?
    var scanPeriodStart: UInt64 = 0
    var nextPurge: UInt64 = 0
    /// The immediate-send message waiting for every device flagged `immediateSendPending`.
    public internal(set) var immediateData = FixedBytes<128>()
    /// Adverts whose data did not parse.
    public internal(set) var malformedAdverts = 0
    /// Adverts of Apple devices the reference apps' filter rules out (`AppleDeviceFilter`): never
    /// filed or connected to (a device already known is still measured).
    public internal(set) var ignoredAppleAdverts = 0
    /// The signal message being written, shared by every link, and the link writing it. Why one:
    /// a message may be 520 octets (a full payload-sharing list), kept for several round trips, and
    /// one per link cost 2 KB on a 4-link wearable, while the central writes on one link at a time
    /// in practice. A link that needs it while another holds it skips that write; the device stays
    /// flagged (immediate send pending, sharing due) and gets it on its next connection.
    public internal(set) var outgoing = FixedBytes<520>()
    public internal(set) var outgoingLink: Int?
    /// The link whose GATT client is delivering results, and the outcome of the procedure that just
    /// ended on it (set by the `GATTClientDelegate` conformance, consumed by `HeraldSensor`).
    public internal(set) var gattHandle: UInt16 = 0
    public internal(set) var gattCompletion: Bool?

    public init(configuration: HeraldSensorConfiguration = HeraldSensorConfiguration()) {
        self.configuration = configuration
        slots = InlineArray(repeating: nil)
        inboundStrangers = InlineArray(repeating: nil)
    }

    // MARK: On and off

    public mutating func start<C: HeraldCentralControl>(now: UInt64, control: inout C) {
        isOn = true
        scanPeriodStart = now
        nextPurge = now &+ configuration.purgeInterval
        setScanning(true, control: &control)
    }

    public mutating func stop<C: HeraldCentralControl>(control: inout C) {
        isOn = false
        setScanning(false, control: &control)
        for i in 0..<links {
            guard let link = slots[i], !link.closing else { continue }
            control.requestDisconnection(handle: link.handle)
            slots[i]!.closing = true
        }
    }

    /// The controller failed: every link and attempt is gone; the stack brings it up again.
    public mutating func controllerDidFail() {
        for i in 0..<links { slots[i] = nil; inboundStrangers[i] = nil }
        outgoingLink = nil
        pending = nil
        isScanning = false
    }

    mutating func setScanning<C: HeraldCentralControl>(_ on: Bool, control: inout C) {
        guard on != isScanning else { return }
        isScanning = on
        control.requestScanning(on)
    }

    // MARK: Adverts

    /// One advertising report: classify it, file it under its device, report its RSSI, and schedule.
    public mutating func didReceive<C: HeraldCentralControl, D: SensorDelegate>(
        advertisingReport report: borrowing AdvertisingReport, now: UInt64, control: inout C, delegate: inout D
    ) {
        guard isOn else { return }
        var c = HeraldAdvertClassification()
        do throws(DecodeError) { try c.add(report.data) } catch { malformedAdverts &+= 1; return }
        let kind: HeraldDeviceKind
        switch c.kind {
        case .herald: kind = .herald
        case .appleConnectToCheck: kind = .appleToCheck
        case .appleIgnored:
            ignoredAppleAdverts &+= 1
            guard database.index(of: report.address) != nil else { return }
            kind = .appleToCheck
        case .notHerald:
            // A scan response often carries nothing Herald; it still measures a device we know.
            guard database.index(of: report.address) != nil else { return }
            kind = .appleToCheck
        }
        let (index, isNew) = database.observe(address: report.address, pseudoAddress: c.pseudoDeviceAddress, kind: kind,
                                              now: now) { gone in delegate.sensor(.ble, available: false, didDeleteOrDetect: gone) }
        let target = database[index]!.target
        if isNew {
            for s in 0..<links where inboundStrangers[s]?.address.address == report.address.address {
                database.entries[index]!.inboundLink = inboundStrangers[s]!.handle
                inboundStrangers[s] = nil
            }
            delegate.sensor(.ble, didDetect: target)
            delegate.sensor(.ble, available: true, didDeleteOrDetect: target)
        }
        if !report.kind.isScanResponse { database.entries[index]!.connectable = report.kind.isConnectable }
        if let tx = c.txPower ?? report.txPower { database.entries[index]!.txPower = tx }
        if let rssi = report.rssi {
            database.entries[index]!.rssi = rssi
            database.entries[index]!.lastSeen = now
            let device = database[index]!
            let proximity = Proximity(value: Int16(rssi), calibration: device.txPower)
            delegate.sensor(.ble, didMeasure: proximity, fromTarget: target)
            if device.hasPayload {
                delegate.sensor(.ble, didMeasure: proximity, fromTarget: target, withPayload: device.payload.span)
            }
        }
        schedule(now: now, control: &control)
    }

    // MARK: Scheduling

    /// Why a device deserves a connection now (lower is more urgent), nil when it does not.
    func urgency(_ d: HeraldDevice, now: UInt64) -> Int? {
        guard d.kind != .receiveOnly, d.connectable, d.inboundLink == nil, !d.isIgnored(at: now), now &- d.lastSeen <= configuration.connectWindow,
              linkIndex(of: d.target) == nil else { return nil }
        if holdsBack(d, now: now) { return nil }
        // Retry a failed device only once an advert shows it is still there.
        if let failed = d.lastFailure, d.lastSeen <= failed { return nil }
        if d.immediateSendPending { return 0 }
        if needsPayload(d, now: now) { return d.kind == .herald ? 1 : 2 }
        return nil
    }

    func needsPayload(_ d: HeraldDevice, now: UInt64) -> Bool {
        guard let t = d.payloadTime else { return true }
        return now &- t >= configuration.payloadUpdateInterval
    }

    public func linkIndex(of target: TargetIdentifier) -> Int? {
        for i in 0..<links where slots[i]?.target == target { return i }
        return nil
    }

    public func linkIndex(handle: UInt16) -> Int? {
        for i in 0..<links where slots[i]?.handle == handle { return i }
        return nil
    }

    public var openLinks: Int {
        var n = 0
        for i in 0..<links where slots[i] != nil { n += 1 }
        return n
    }

    /// Starts the most urgent connection, if any; immediate send first, then new Herald devices,
    /// then Apple devices to check, the most recently heard first within each.
    public mutating func schedule<C: HeraldCentralControl>(now: UInt64, control: inout C) {
        guard isOn, pending == nil else { return }
        var best: Int?
        var bestUrgency = Int.max
        for i in 0..<devices {
            guard let d = database[i], let u = urgency(d, now: now) else { continue }
            if u < bestUrgency || (u == bestUrgency && d.lastSeen > database[best!]!.lastSeen) {
                best = i
                bestUrgency = u
            }
        }
        guard let chosen = best else { return }
        if openLinks == links {
            // At the simultaneous connection limit the oldest link makes way (unless one is already
            // closing, which will free a slot).
            var oldest: Int?
            for i in 0..<links {
                guard let l = slots[i], !l.inbound else { continue }
                if l.closing { return }
                if oldest == nil || l.connectedAt < slots[oldest!]!.connectedAt { oldest = i }
            }
            if let o = oldest {
                slots[o]!.closing = true
                slots[o]!.dropped = true
                control.requestDisconnection(handle: slots[o]!.handle)
            }
            return
        }
        let device = database[chosen]!
        if control.requestConnection(to: device.address, now: now, timeout: configuration.connectionTimeout) {
            pending = (device.target, device.address, now)
        }
    }

    // MARK: Links

    /// A link came up. For our pending attempt, returns the first GATT step of its procedure.
    public mutating func didConnect<C: HeraldCentralControl>(handle: UInt16, peer: DeviceAddress, isCentral: Bool,
                                                             now: UInt64, control: inout C) -> HeraldGATTStep? {
        if !isCentral {
            // A peer connected to us: no second link to the same device is made while it lasts (two
            // links between one pair of devices help nobody, and crossing attempts stall). If it is a
            // Herald device whose payload we need, read it over this link instead.
            guard let i = database.index(of: peer) else {
                for s in 0..<links where inboundStrangers[s] == nil {
                    inboundStrangers[s] = (handle, peer)
                    break
                }
                return nil
            }
            database.entries[i]!.inboundLink = handle
            let d = database[i]!
            guard d.hasHeraldService == true || d.kind == .herald, needsPayload(d, now: now),
                  let slot = freeLinkSlot() else { return nil }
            var procedure = HeraldCentralProcedure(wantsImmediateSend: d.immediateSendPending,
                                                   wantsPayload: true, wantsSharing: false)
            let step = procedure.start()
            var link = HeraldCentralLink(handle: handle, target: d.target, connectedAt: now, procedure: procedure)
            link.inbound = true
            slots[slot] = link
            return step
        }
        guard let p = pending, p.address == peer else { return nil }
        pending = nil
        guard let index = database.index(of: p.target), let slot = freeLinkSlot() else {
            control.requestDisconnection(handle: handle)
            return nil
        }
        let d = database[index]!
        let sharingDue = d.lastShared.map { now &- $0 >= configuration.sharingInterval } ?? true
        var procedure = HeraldCentralProcedure(wantsImmediateSend: d.immediateSendPending,
                                               wantsPayload: needsPayload(d, now: now), wantsSharing: sharingDue)
        let step = procedure.start()
        slots[slot] = HeraldCentralLink(handle: handle, target: d.target, connectedAt: now, procedure: procedure)
        return step
    }

    func freeLinkSlot() -> Int? {
        for i in 0..<links where slots[i] == nil { return i }
        return nil
    }

    /// Our connection attempt failed or timed out. An attempt the stack cancelled itself (the peer
    /// connected to us first: 0x0B; our own address change: 0x44) is no failure of the peer's. The
    /// next attempt waits for the next advert: the stack has resumed scanning, and starting one at
    /// once would keep the scanner paused through attempt after attempt.
    public mutating func didFailToConnect<C: HeraldCentralControl>(to peer: DeviceAddress, status: HCIStatus = .connectionTimeout,
                                                                   now: UInt64, control: inout C) {
        guard let p = pending, p.address == peer else { return }
        pending = nil
        guard status != .connectionAlreadyExists, status != .operationCancelledByHost else { return }
        if let i = database.index(of: p.target) { recordFailure(at: i, now: now) }
    }

    mutating func recordFailure(at index: Int, now: UInt64) {
        database.entries[index]!.consecutiveFailures += 1
        database.entries[index]!.lastFailure = now
        database.entries[index]!.lastUpdated = now
        if database[index]!.consecutiveFailures >= configuration.maximumFailures { database.backOff(at: index, now: now) }
    }

    /// The owner is closing the link itself (e.g. after an ATT timeout): no second request.
    public mutating func linkWillClose(handle: UInt16) {
        guard let s = linkIndex(handle: handle) else { return }
        slots[s]!.closing = true
    }

    /// A link went down. The contact event is untouched: it ends at the last RSSI, not here.
    public mutating func didDisconnect<C: HeraldCentralControl>(handle: UInt16, now: UInt64, control: inout C) {
        for i in 0..<devices where database[i]?.inboundLink == handle { database.entries[i]!.inboundLink = nil }
        for s in 0..<links where inboundStrangers[s]?.handle == handle { inboundStrangers[s] = nil }
        guard let slot = linkIndex(handle: handle) else {
            schedule(now: now, control: &control)
            return
        }
        let link = slots[slot]!
        slots[slot] = nil
        if outgoingLink == slot { outgoingLink = nil }
        if !link.procedure.isFinished, !link.dropped, !link.inbound, let i = database.index(of: link.target) {
            recordFailure(at: i, now: now)
        }
        schedule(now: now, control: &control)
    }

    // MARK: GATT results

    public mutating func gattDidExchangeMTU(handle: UInt16, mtu: Int) {
        guard let s = linkIndex(handle: handle) else { return }
        slots[s]!.procedure.didExchangeMTU(mtu)
    }

    public mutating func gattDidDiscover(handle: UInt16, service uuid: BluetoothUUID, start: UInt16, end: UInt16) {
        guard let s = linkIndex(handle: handle) else { return }
        slots[s]!.procedure.didDiscover(service: uuid, start: start, end: end)
    }

    public mutating func gattDidDiscover(handle: UInt16, characteristic uuid: BluetoothUUID, valueHandle: UInt16) {
        guard let s = linkIndex(handle: handle) else { return }
        slots[s]!.procedure.didDiscover(characteristic: uuid, valueHandle: valueHandle)
    }

    public mutating func gattDidRead(handle: UInt16, offset: Int, value: Span<UInt8>) {
        guard let s = linkIndex(handle: handle) else { return }
        slots[s]!.procedure.didRead(offset: offset, value: value)
    }

    /// The link's GATT procedure ended; returns the next step (nil for a link that is not ours). On
    /// `.done` the disconnection has already been requested.
    public mutating func gattDidComplete<C: HeraldCentralControl, D: SensorDelegate>(
        handle: UInt16, succeeded: Bool, now: UInt64, control: inout C, delegate: inout D
    ) -> HeraldGATTStep? {
        guard let s = linkIndex(handle: handle), !slots[s]!.dropped else { return nil }
        var step = slots[s]!.procedure.didComplete(succeeded: succeeded)
        if let i = database.index(of: slots[s]!.target), slots[s]!.procedure.os != .unknown {
            database.entries[i]!.os = slots[s]!.procedure.os
        }
        if slots[s]!.procedure.payloadComplete && !slots[s]!.payloadDelivered { deliverPayload(link: s, now: now, delegate: &delegate) }
        while case .needMessage(let kind) = step {
            if outgoingLink == nil || outgoingLink == s {
                if loadOutgoing(kind, link: s, now: now), !outgoing.overflowed, outgoing.count > 0 {
                    outgoingLink = s
                    step = slots[s]!.procedure.load(length: outgoing.count)
                    continue
                }
            }
            step = slots[s]!.procedure.skip()
        }
        if outgoingLink == s, !slots[s]!.procedure.isWriting { outgoingLink = nil }
        if case .done(let result) = step { finish(link: s, result: result, now: now, control: &control) }
        return step
    }

    mutating func deliverPayload<D: SensorDelegate>(link s: Int, now: UInt64, delegate: inout D) {
        slots[s]!.payloadDelivered = true
        guard let i = database.index(of: slots[s]!.target) else { return }
        let payload = slots[s]!.procedure.payload
        guard let (kept, merged) = database.setPayload(payload.span, at: i, now: now) else { return }
        let target = database[kept]!.target
        if let gone = merged {
            slots[s]!.target = target
            delegate.sensor(.ble, available: false, didDeleteOrDetect: gone)
        }
        delegate.sensor(.ble, didRead: payload.span, fromTarget: target)
        if let rssi = database[kept]!.rssi {
            delegate.sensor(.ble, didMeasure: Proximity(value: Int16(rssi), calibration: database[kept]!.txPower),
                            fromTarget: target, withPayload: payload.span)
        }
    }

    mutating func finish<C: HeraldCentralControl>(link s: Int, result: HeraldProcedureResult, now: UInt64, control: inout C) {
        let p = slots[s]!.procedure
        if let i = database.index(of: slots[s]!.target) {
            if p.immediateSendWritten { database.entries[i]!.immediateSendPending = false }
            if p.sharingWritten { database.entries[i]!.lastShared = now }
            switch result {
            case .completed:
                database.entries[i]!.consecutiveFailures = 0
                database.entries[i]!.failureRounds = 0
                database.entries[i]!.hasHeraldService = true
            case .noHeraldService:
                // An Apple device without the service now may open the app later: check again after
                // the (growing) ignore period.
                database.entries[i]!.hasHeraldService = nil
                database.ignore(at: i, now: now)
            case .failed:
                recordFailure(at: i, now: now)
            }
        }
        if slots[s]!.inbound {
            // The peer's link: our work on it is done, the slot is free, the link stays.
            slots[s] = nil
        } else if !slots[s]!.closing {
            slots[s]!.closing = true
            control.requestDisconnection(handle: slots[s]!.handle)
        }
    }

    // MARK: Time

    public var nextDeadline: UInt64? {
        guard isOn else { return nil }
        var d = nextPurge
        if let window = configuration.scanWindow {
            d = min(d, isScanning ? scanPeriodStart &+ window : scanPeriodStart &+ configuration.scanPeriod)
        }
        if let p = pending { d = min(d, p.since &+ configuration.connectionTimeout &+ 2_000) }
        return d
    }

    public mutating func tick<C: HeraldCentralControl, D: SensorDelegate>(now: UInt64, control: inout C, delegate: inout D) {
        guard isOn else { return }
        if now >= nextPurge {
            nextPurge = now &+ configuration.purgeInterval
            database.purge(now: now, outOfRange: configuration.outOfRange) { gone in
                delegate.sensor(.ble, available: false, didDeleteOrDetect: gone)
            }
        }
        if let window = configuration.scanWindow {
            let period = max(configuration.scanPeriod, window)
            while now &- scanPeriodStart >= period { scanPeriodStart &+= period }
            setScanning(now &- scanPeriodStart < window, control: &control)
        }
        // The stack reports our own timeout as a failure; this only guards against a lost report.
        if let p = pending, now &- p.since >= configuration.connectionTimeout &+ 2_000 { pending = nil }
        schedule(now: now, control: &control)
    }
}
