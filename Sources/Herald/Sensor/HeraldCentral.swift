import BluetoothHost

/// Where the central's decisions go. `StackControlOf` conforms (see below); tests record them.
public protocol HeraldCentralControl {
    /// Starts a connection attempt that fails on its own after `timeout` ms; false when one is
    /// already under way (the controller allows one LE Create Connection, Core 5.4 Vol 4 Part E 7.8.12).
    mutating func requestConnection(to peer: DeviceAddress, now: UInt64, timeout: UInt64) -> Bool
    mutating func requestDisconnection(handle: UInt16)
    /// The scan to run (nil: none). Active while some address has yet to answer a scan request
    /// (`HeraldCentral+Scanning`), so that scan responses with the second Herald UUID arrive.
    mutating func requestScanning(_ scan: ScanIntent?)
}

extension StackControlOf: HeraldCentralControl {
    public mutating func requestConnection(to peer: DeviceAddress, now: UInt64, timeout: UInt64) -> Bool {
        connect(to: peer, now: now, timeout: timeout)
    }
    public mutating func requestDisconnection(handle: UInt16) { disconnect(handle: handle) }
    public mutating func requestScanning(_ scan: ScanIntent?) {
        if let scan { startScanning(active: scan.active, interval: scan.interval, window: scan.window) } else { stopScanning() }
    }
}

/// A connection the central does Herald work on: one it made, or one a peer made to us (GATT roles
/// are independent of link roles, Core 5.4 Vol 3 Part G 2.2). It owns the GATT client and the Herald
/// procedure running on it, so the client reports into that procedure in place.
public struct HeraldCentralLink {
    /// Who made the link.
    public enum Origin: Sendable, Equatable {
        /// Our connection attempt: we close it when the work is done.
        case ours
        /// The peer connected to us: we read over its link but leave closing it to the peer, and
        /// its end is no failure of ours.
        case peers
    }

    /// Whether we are closing the link, and why.
    public enum Closing: Sendable, Equatable {
        case no
        /// We asked for the disconnection (work done, the sensor stopped, an ATT timeout).
        case requested
        /// Dropped at the connection limit for a newer link: its work stops and its end is not the
        /// peer's failure.
        case dropped
    }

    public var handle: UInt16
    public var target: TargetIdentifier
    public var connectedAt: UInt64
    public let origin: Origin
    public internal(set) var closing: Closing = .no
    /// The link's GATT client. Signal writes are at most ATT_MTU-3 octets each, so no long-write
    /// buffer is needed.
    public internal(set) var client: GATTClient<0>
    public internal(set) var procedure: HeraldCentralProcedure
    /// The payload the procedure read has gone to the database and the delegate.
    var payloadDelivered = false
    /// The peer has sent an ATT PDU on the link (`HeraldSensorConfiguration.firstAnswerTimeout`).
    public internal(set) var heardFromPeer = false

    /// When a link we made and still hold must have heard from its peer, if that is still owed.
    func firstAnswerDeadline(_ timeout: UInt64) -> UInt64? {
        origin == .ours && !heardFromPeer && closing == .no ? connectedAt &+ timeout : nil
    }

    /// `clientMTU`: the largest ATT_MTU the client offers (`HeraldCentral.clientMTU`).
    init(handle: UInt16, target: TargetIdentifier, connectedAt: UInt64, origin: Origin, procedure: HeraldCentralProcedure,
         clientMTU: UInt16) {
        client = GATTClient<0>(maximumMTU: clientMTU)
        self.handle = handle
        self.target = target
        self.connectedAt = connectedAt
        self.origin = origin
        self.procedure = procedure
    }

    public var isClosing: Bool { closing != .no }
}

/// Which device the stack's connection attempt is for. The attempt itself, its timer and its end
/// belong to the stack (`StackControl.connect`): it reports every attempt's end, as a link
/// (`didConnect`), a failure (`didFailToConnect`, its own timeout included) or the controller's failure
/// (`controllerDidFail`), and this record is cleared by those reports alone; it has no timer.
public struct HeraldConnectionAttempt: Sendable, Equatable {
    public var target: TargetIdentifier
    public var address: DeviceAddress
}

/// The Herald central, sans-I/O: a device database in fixed capacity plus the decisions of the
/// scheduler — report every advert's RSSI, connect to each new Herald device (and each Apple device
/// that may hide the service), read its payload, close as soon as the work is done, ignore devices
/// that fail, share payloads with iOS peers, and send immediate data first.
///
/// Split along the Herald connection lifecycle (the reference apps' `BLEReceiver`): adverts and time
/// here, connections and back-off in `HeraldCentral+Connections`, the GATT work on each link in
/// `HeraldCentral+GATT` (its state machine is `HeraldCentralProcedure`), signal messages in
/// `HeraldCentral+Signals`.
public struct HeraldCentral<let devices: Int, let links: Int> {
    /// Scan interval 100 ms, and the window listened in each, 50 ms (units of 0.625 ms, Core 5.4
    /// Vol 4 Part E 7.8.10).
    ///
    /// Why not continuous, as the central scanned until 2026-11-30: Zephyr's link layer reserves the
    /// whole interval for a scan whose window fills it (`ull_scan.c`), and its ticker skips another
    /// role's event that would overlap a reservation until that event has waited longer
    /// (`ticker.c`, `ticker_resolve_collision`). A wearable that asked to advertise every 100 ms, as
    /// the reference's does, beside a continuous scan sent about every other advert; with half
    /// the interval unreserved its adverts go out every 100 ms, so a central connecting to it waits
    /// half as long for the advert its connection request answers (`docs/crowd-issue-39.md`, "Half a
    /// scan window"). The cost, measured there: an advert is heard in about half the events it is
    /// sent in, and the ATT round trips on our links take longer at the median. herald-for-cpp's
    /// Zephyr receiver scans at half duty too (30 ms of every 60 ms, `concrete_ble_receiver.cpp`).
    public static var scanInterval: UInt16 { 0x00A0 }
    public static var scanEventWindow: UInt16 { 0x0050 }

    public var configuration: HeraldSensorConfiguration
    public var database = HeraldDeviceDatabase<devices>()
    /// Each central link's GATT client and procedure, in whichever entry was free when it opened.
    /// Internal storage: every public method names a link by its HCI handle.
    var slots: InlineArray<links, HeraldCentralLink?>
    /// The device the stack's connection attempt is for, until the stack reports its end.
    public internal(set) var pending: HeraldConnectionAttempt?
    /// The stack refused our last attempt's link for want of room (0x0D): no attempt starts before a
    /// link ends or this time passes (`schedule`).
    public internal(set) var waitsForRoomUntil: UInt64?
    /// The device whose attempt the controller refused 0x0B because a link of ours to it is still
    /// closing, held until a link we do not track ends or `lingeringLinkHold` passes
    /// (`HeraldCentral+Connections.didFailToConnect`).
    var heldForLingeringLink: TargetIdentifier?
    public internal(set) var isOn = false
    /// The scan asked of the stack (nil: none).
    public internal(set) var scan: ScanIntent?
    public var isScanning: Bool { scan != nil }
    /// Inside the duty cycle's scan window (always, without `scanWindow`).
    var scanWindowOpen = true
    /// Active scanning is wanted until then (`HeraldCentral+Scanning`).
    var activeScanUntil: UInt64 = 0
    /// A read of ours pauses the scan until then (`HeraldCentral+Scanning.readPausingScan`).
    var scanPausedUntil: UInt64?
    public internal(set) var answeredScans = AnsweredScanAddresses()
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
    /// Central links no attempt of ours was waiting for (one the stack had already ended that came
    /// up late), closed at once (`didConnect`).
    public internal(set) var unownedLinksClosed = 0
    /// Adverts whose data did not parse.
    public internal(set) var malformedAdverts = 0
    /// Adverts of Apple devices the reference apps' filter rules out (`AppleDeviceFilter`): never
    /// filed or connected to (a device already known is still measured).
    public internal(set) var ignoredAppleAdverts = 0
    /// The signal message being written, shared by every link, and the link writing it. Why one:
    /// a message may be 136 octets on firmware (520 on a host: `OutgoingSignalBytes`), kept for several round trips, and
    /// one per link cost 2 KB on a 4-link wearable, while the central writes on one link at a time
    /// in practice. A link that needs it while another holds it skips that write; the device stays
    /// flagged (immediate send pending, sharing due) and gets it on its next connection.
    public internal(set) var outgoing = OutgoingSignalBytes()
    var outgoingLink: Int?
    /// The largest ATT_MTU each link's GATT client offers in Exchange MTU: what the stack's link
    /// buffers hold (`HeraldSensor` passes its `LinkBuffers`' PDU capacity). A larger offer would let
    /// a peer answer with PDUs the link's reassembly buffer cannot take (ATT: one receive MTU per
    /// device for both roles, Core 5.4 Vol 3 Part F 3.4.2).
    public internal(set) var clientMTU: UInt16
    /// The random delays of `HeraldCentral+Crowd`, seeded from our advertised address.
    public internal(set) var draws = CentralDraws()

    public init(configuration: HeraldSensorConfiguration = HeraldSensorConfiguration(),
                clientMTU: UInt16 = ATTMTU.defaultMaximum) {
        self.configuration = configuration
        self.clientMTU = max(clientMTU, ATTMTU.minimum)
        slots = InlineArray(repeating: nil)
        inboundStrangers = InlineArray(repeating: nil)
    }

    // MARK: On and off

    public mutating func start<C: HeraldCentralControl>(now: UInt64, control: inout C) {
        isOn = true
        scanPeriodStart = now
        nextPurge = now &+ configuration.purgeInterval
        scanWindowOpen = true
        // Nothing has answered a scan request yet.
        if let hold = configuration.activeScanHold { activeScanUntil = now &+ hold }
        updateScan(now: now, control: &control)
    }

    public mutating func stop<C: HeraldCentralControl>(control: inout C) {
        isOn = false
        updateScan(now: 0, control: &control)
        for i in 0..<links { close(link: i, control: &control) }
    }

    /// The controller failed: every link and attempt is gone; the stack brings it up again.
    public mutating func controllerDidFail() {
        for i in 0..<links { slots[i] = nil; inboundStrangers[i] = nil }
        outgoingLink = nil
        pending = nil
        waitsForRoomUntil = nil
        heldForLingeringLink = nil
        scan = nil
        scanPausedUntil = nil
    }

    // MARK: Adverts

    /// One advertising report: classify it, file it under its device, report its RSSI, and schedule.
    /// Returns a GATT step to perform on an inbound link when the report filed a peer that had
    /// connected to us before we heard it (`adoptInboundStranger`).
    @discardableResult
    public mutating func didReceive<C: HeraldCentralControl, D: SensorDelegate>(
        advertisingReport report: borrowing AdvertisingReport, now: UInt64, control: inout C, delegate: inout D
    ) -> (handle: UInt16, step: HeraldGATTStep)? {
        guard isOn else { return nil }
        var c = HeraldAdvertClassification()
        do throws(DecodeError) { try c.add(report.data) } catch { malformedAdverts &+= 1; return nil }
        let kind: HeraldDeviceKind
        switch c.kind {
        case .herald: kind = .herald
        case .appleConnectToCheck: kind = .appleToCheck
        case .appleIgnored:
            ignoredAppleAdverts &+= 1
            guard database.index(of: report.address) != nil else {
                return heardUnfiled(kind: report.kind, address: report.address, now: now, control: &control)
            }
            kind = .appleToCheck
        case .notHerald:
            // A scan response often carries nothing Herald; it still measures a device we know.
            guard database.index(of: report.address) != nil else {
                return heardUnfiled(kind: report.kind, address: report.address, now: now, control: &control)
            }
            kind = .appleToCheck
        }
        let (index, isNew) = database.observe(address: report.address, pseudoAddress: c.pseudoDeviceAddress, kind: kind,
                                              now: now) { gone in delegate.sensor(.ble, available: false, didDeleteOrDetect: gone) }
        let target = database.targetIdentifier(at: index)
        var inboundRead: (handle: UInt16, step: HeraldGATTStep)?
        if isNew {
            hold(device: index, for: spread(configuration.firstAttemptSpread), now: now)
            inboundRead = adoptInboundStranger(report.address, device: index, now: now)
            delegate.sensor(.ble, didDetect: target)
            delegate.sensor(.ble, available: true, didDeleteOrDetect: target)
        }
        if !report.kind.isScanResponse { database.entries[index]?.connectable = report.kind.isConnectable }
        noteScanResponseNeed(kind: report.kind, address: report.address, device: index, now: now)
        if let tx = c.txPower ?? report.txPower { database.entries[index]?.txPower = tx }
        if let rssi = report.rssi {
            // One reading per advertising event. A scan response answers the scan request we sent to the
            // ADV_IND (or ADV_SCAN_IND) just reported, within the same event about a millisecond later
            // (Core 5.4 Vol 6 Part B 4.4.3.2), so a scanner only ever gets one after that advert: counting
            // both gave two readings per event (on Zephyr's radio 3,167 of 4,290 gaps between readings
            // were under 5 ms). Android's ScanResult and iOS's didDiscover, whose callbacks the reference
            // apps turn into didMeasure, merge an advert and its scan response into one. The scan
            // response still refreshes the device's RSSI and when it was last seen.
            if report.kind.isScanResponse {
                database.entries[index]?.rssi = rssi
                database.entries[index]?.lastSeen = now
            } else {
                measure(device: index, rssi: rssi, now: now, delegate: &delegate)
            }
        }
        updateScan(now: now, control: &control)
        schedule(now: now, control: &control)
        return inboundRead
    }

    /// An RSSI heard from device `index`: its contact event extends to now, and the delegate hears
    /// it, with the payload once we hold one.
    mutating func measure<D: SensorDelegate>(device index: Int, rssi: Int8, now: UInt64, delegate: inout D) {
        database.entries[index]?.rssi = rssi
        database.entries[index]?.lastSeen = now
        // One read of the device: each optional-chained read of a field costs about a copy of it.
        guard let device = database.entries[index] else { return }
        let target = database.targetIdentifier(at: index)
        let proximity = Proximity(value: Int16(rssi), calibration: device.txPower)
        delegate.sensor(.ble, didMeasure: proximity, fromTarget: target)
        if device.hasPayload {
            database.withPayload(at: index) { payload in
                delegate.sensor(.ble, didMeasure: proximity, fromTarget: target, withPayload: payload)
            }
        }
    }

    // MARK: Time

    /// When `tick` is due. Inlined so that the caller reads the fields in place (see `gattDeadline`).
    @inline(__always)
    public var nextDeadline: UInt64? {
        guard isOn else { return nil }
        var d = nextPurge
        if let window = configuration.scanWindow {
            d = min(d, scanWindowOpen ? scanPeriodStart &+ window : scanPeriodStart &+ configuration.scanPeriod)
        }
        if scan?.active == true, configuration.activeScanHold != nil { d = min(d, activeScanUntil) }
        if let t = scanPausedUntil { d = min(d, t) }
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
            scanWindowOpen = now &- scanPeriodStart < window
        }
        updateScan(now: now, control: &control)
        for s in 0..<links {
            // Closed as ours (`close`): its end is then the attempt's failure (`didDisconnect`).
            if let t = slots[s]?.firstAnswerDeadline(configuration.firstAnswerTimeout), now >= t { close(link: s, control: &control) }
        }
        schedule(now: now, control: &control)
    }
}
