/// Scanning and connection establishment as GAP procedures over a controller that cannot scan and
/// initiate at once.
///
/// A controller may refuse LE Create Connection while its scanner runs: the Core lets it limit which
/// link-layer states combine (Core 5.4 Vol 6 Part B 1.1.1), and Zephyr's link layer builds its
/// initiator from the scanner, so it answers 0x0C Command Disallowed (v2.5.0 and current releases
/// alike). The stack therefore owns the scanner: the application states the scan it wants
/// (`startScanning`/`stopScanning`); `connect` pauses the scanner, and whatever ends the attempt
/// (connection, refusal, timeout, cancel) resumes the scan the application wants *then*, after its
/// callback has run. A scan asked for during an attempt waits for its end. Zephyr likewise stops its
/// own scanner before initiating (`subsys/bluetooth/host/conn.c`) and restarts it afterwards.

/// The scan an application wants: active or passive, continuous (window = interval) unless it asks
/// for a shorter window.
public struct ScanIntent: Equatable, Sendable {
    public var active: Bool
    /// Scan interval and window, units of 0.625 ms (Core 5.4 Vol 4 Part E 7.8.10); the window is
    /// never longer than the interval, which the Core requires.
    public var interval: UInt16
    public var window: UInt16

    public init(active: Bool, interval: UInt16, window: UInt16? = nil) {
        self.active = active
        self.interval = interval
        self.window = min(window ?? interval, interval)
    }
}

/// One LE Create Connection under way (Core 5.4 Vol 4 Part E 7.8.12).
public struct ConnectionAttempt: Equatable, Sendable {
    public enum Phase: Equatable, Sendable {
        /// Waiting for LE Connection Complete until `deadline`.
        case initiating
        /// LE Create Connection Cancel sent (Core 5.4 Vol 4 Part E 7.8.13); the attempt ends with
        /// LE Connection Complete (0x02 Unknown Connection Identifier), reported to the application
        /// as `reason`, or at `deadline` if the controller never says so (Bumble's virtual one).
        case cancelling(reason: HCIStatus)
    }

    public let peer: DeviceAddress
    public internal(set) var deadline: UInt64
    public internal(set) var phase: Phase

    /// How an LE Connection Complete with `status` is reported: after our own cancel, as the
    /// reason we cancelled for (a timeout is a timeout, not "unknown connection identifier").
    func reported(_ status: HCIStatus) -> HCIStatus {
        if case .cancelling(let reason) = phase, status != .success { return reason }
        return status
    }
}

extension StackControlOf {
    /// Scans until `stopScanning`, continuously (window = interval) unless `window` is shorter. While
    /// a connection attempt is under way the scan starts when the attempt ends. Asking again for the
    /// scan in progress sends nothing; a different scan stops the scanner first, since its parameters
    /// cannot change while it runs (Core 5.4 Vol 4 Part E 7.8.10).
    public mutating func startScanning(active: Bool, interval: UInt16 = 0x00A0, window: UInt16? = nil) {
        let intent = ScanIntent(active: active, interval: interval, window: window)
        if scanning == intent, scannerEnabled || connecting != nil { return }
        pauseScanner()
        scanning = intent
        resumeScanning()
    }

    /// Stops scanning; it stays off after any connection attempt.
    public mutating func stopScanning() {
        scanning = nil
        pauseScanner()
    }

    /// Turns the controller's scanner off without forgetting the scan the application wants (for
    /// commands the controller refuses while it scans, such as LE Set Random Address, 7.8.4).
    /// `resumeScanning` turns it back on.
    public mutating func pauseScanner() {
        guard scannerEnabled else { return }
        send(HCILESetScanEnable(enable: false, filterDuplicates: false), tag: .gap)
        scannerEnabled = false
    }

    /// Starts the scan the application wants, if any, unless it runs already or a connection
    /// attempt holds the scanner.
    public mutating func resumeScanning() {
        guard connecting == nil, !scannerEnabled, let intent = scanning else { return }
        send(HCILESetScanParameters(scanType: intent.active ? .active : .passive, interval: intent.interval,
                                    window: intent.window, ownAddressType: ownAddressType, filterPolicy: .acceptAll),
             tag: .gap)
        send(HCILESetScanEnable(enable: true, filterDuplicates: false), tag: .gap)
        scannerEnabled = true
    }

    /// Starts connecting to `peer` as central, with our own timeout, pausing the scanner for the
    /// attempt. One attempt at a time: the controller allows a single LE Create Connection (Core 5.4
    /// Vol 4 Part E 7.8.12); returns false when one is already under way.
    ///
    /// The interval defaults to 7.5–15 ms: a Herald central connects to read a payload of up to
    /// 510 octets and leaves, and every ATT round trip costs at least one connection event (a
    /// 200-octet read takes ~60 ms at Bumble's default 60 ms interval, under 15 ms here). The
    /// supervision timeout is 2 s: far above the Core's floor ((1 + latency) × interval × 2, Vol 6
    /// Part B 4.5.2), because a peer with several links (a phone, a wearable serving four) cannot
    /// always schedule every short-interval link's events; at 720 ms one of four links to a
    /// Zephyr peripheral was lost with Connection Timeout (0x08).
    @discardableResult
    public mutating func connect(to peer: DeviceAddress, now: UInt64, timeout: UInt64 = 8_000,
                                 intervalMin: UInt16 = 0x0006, intervalMax: UInt16 = 0x000C,
                                 supervisionTimeout: UInt16 = 0x00C8) -> Bool {
        guard connecting == nil else { return false }
        pauseScanner()
        connecting = ConnectionAttempt(peer: peer, deadline: now &+ timeout, phase: .initiating)
        // Peer address types 0x02/0x03 (identity) are only meaningful with a resolving list, which
        // this host does not use: connect to the address as advertised (Core 5.4 Vol 4 Part E 7.8.12).
        let peerType: AddressType = peer.type == .publicDevice || peer.type == .publicIdentity ? .publicDevice : .randomDevice
        send(HCILECreateConnection(
            peerAddressType: peerType, peerAddress: peer.address, ownAddressType: ownAddressType,
            connectionIntervalMin: intervalMin, connectionIntervalMax: intervalMax, maxLatency: 0,
            supervisionTimeout: supervisionTimeout), tag: .connection)
        return true
    }

    /// Cancels the connection attempt under way, if any; the application hears of its end through
    /// `stackDidFailToConnect` with 0x44 Operation Cancelled by Host (or `stackDidConnect`, if the
    /// link came up first).
    public mutating func cancelConnecting(now: UInt64) {
        cancelAttempt(reason: .operationCancelledByHost, now: now)
    }

    /// Sends LE Create Connection Cancel once and gives the controller `LEStackTiming.cancelGrace`
    /// to end the attempt.
    mutating func cancelAttempt(reason: HCIStatus, now: UInt64) {
        guard var attempt = connecting, attempt.phase == .initiating else { return }
        send(HCILECreateConnectionCancel(), tag: .connection)
        attempt.phase = .cancelling(reason: reason)
        attempt.deadline = now &+ LEStackTiming.cancelGrace
        connecting = attempt
    }
}

public enum LEStackTiming {
    /// How long after LE Create Connection Cancel the stack waits for the controller's LE Connection
    /// Complete before it reports the attempt failed on its own.
    public static var cancelGrace: UInt64 { 2_000 }
}
