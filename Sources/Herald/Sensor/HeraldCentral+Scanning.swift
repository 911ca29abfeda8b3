import BluetoothHost

// The central's scan: on or off (the duty cycle), and active only while it needs a scan response.
//
// Why not always active, as the reference apps scan: a scanner that answers every ADV_IND with a
// SCAN_REQ meets other centrals' CONNECT_INDs to the same advert. Both are sent 150 µs after the
// ADV_IND (Core 5.4 Vol 6 Part B 4.4.2.3, 4.4.3.2) on the same channel, and the advertiser takes at most
// one. On Zephyr 3.0.99's simulated radio (three wearables, a beacon and a phone), each wearable sent
// about 14 SCAN_REQs a second, and 3 of the 4 links that ended 0x3E (Connection Failed to be
// Established) in one air capture were a CONNECT_IND lost beside another wearable's SCAN_REQ.
// What a scan response can add is the second Herald UUID, a TX power level, an Apple device's data:
// static for as long as the address lasts. So the central scans actively only while a scannable
// advert comes from an address that has not yet answered a scan request, for `activeScanHold` after
// it, and passively otherwise; a new address (a rotation, a newcomer) makes it active again. RSSI
// readings come from the adverts (a scan response is not a reading, `didReceive`), so they do not
// change.
extension HeraldCentral {
    /// The scan the central wants now: none when off, outside the duty cycle's window, or while a
    /// read of ours holds the radio (`scanPausedUntil`).
    mutating func wantedScan(now: UInt64) -> ScanIntent? {
        scanPausedUntil = readPausingScan(now: now).map { $0 &+ Self.scanPauseLimit }
        guard isOn, scanWindowOpen, scanPausedUntil == nil else { return nil }
        let active = configuration.activeScanHold == nil || now < activeScanUntil
        return ScanIntent(active: active, interval: Self.scanInterval, window: Self.scanEventWindow)
    }

    /// When the youngest read of ours still under way opened, if it opened less than
    /// `scanPauseLimit` ago: while one has, the central does not scan.
    ///
    /// Why: our own scan window slows our links. On Zephyr 3.0.99's radio an ATT round trip on a
    /// link of ours took a median 85–109 ms beside the 50 ms window, and 37–52 ms with no scan
    /// while we read, so the crowd's first reads came sooner (`docs/crowd-issue-39.md`, "No scan
    /// while we read"). herald-for-cpp's Zephyr receiver stops scanning for the whole of a
    /// connection too (`openConnection` stops it; `restartScanningAndAdvertising` starts it
    /// again). A read that outlasts the limit (a peer answering slowly) pauses it no longer: the
    /// central must go on hearing its peers.
    mutating func readPausingScan(now: UInt64) -> UInt64? {
        var youngest: UInt64?
        for i in 0..<links {
            guard let opened = slots[i]?.connectedAt, slots[i]?.isClosing == false,
                  now &- opened < Self.scanPauseLimit else { continue }
            youngest = max(youngest ?? 0, opened)
        }
        return youngest
    }

    /// How long a read pauses the scan at most (ms): a Herald read takes about a tenth of it.
    public static var scanPauseLimit: UInt64 { 1_000 }

    /// Asks the stack for the scan wanted now, if it differs from the one asked for. Not inlined: five
    /// callers, and on the firmware wearable each inlined copy cost flash.
    @inline(never)
    mutating func updateScan<C: HeraldCentralControl>(now: UInt64, control: inout C) {
        let wanted = wantedScan(now: now)
        guard wanted != scan else { return }
        scan = wanted
        control.requestScanning(wanted)
    }

    /// Notes what `report` says of its address's scan response, for a device filed at `index` (nil: an
    /// address the database does not hold, remembered in `answeredScans` instead).
    @inline(never)
    mutating func noteScanResponseNeed(kind: AdvertisingReportKind, address: DeviceAddress, device index: Int?, now: UInt64) {
        guard let hold = configuration.activeScanHold else { return }
        if kind.isScanResponse {
            if let i = index { database.entries[i]?.answeredScan = true } else { answeredScans.insert(address.address) }
            return
        }
        guard kind.isScannable else { return }
        let answered = if let i = index { database.entries[i]?.answeredScan == true } else { answeredScans.contains(address.address) }
        if !answered { activeScanUntil = now &+ hold }
    }
}

extension HeraldCentral {
    /// An advert or scan response of an address the database does not hold and will not file (nothing
    /// Herald in it): only its scan response matters here.
    mutating func heardUnfiled<C: HeraldCentralControl>(kind: AdvertisingReportKind, address: DeviceAddress, now: UInt64,
                                                        control: inout C) -> (handle: UInt16, step: HeraldGATTStep)? {
        noteScanResponseNeed(kind: kind, address: address, device: nil, now: now)
        updateScan(now: now, control: &control)
        return nil
    }
}

/// Addresses the database does not hold whose scan response we have (a device whose advert and scan
/// response show nothing Herald is never filed): without them one such device nearby would keep the
/// central scanning actively. The oldest is overwritten; a device pushed out costs one more scan response.
public struct AnsweredScanAddresses: Sendable {
    var addresses: InlineArray<8, BDAddress?> = InlineArray(repeating: nil)
    var next: UInt8 = 0

    public init() {}

    mutating func contains(_ address: BDAddress) -> Bool {
        for i in 0..<8 where addresses[i] == address { return true }
        return false
    }

    mutating func insert(_ address: BDAddress) {
        guard !contains(address) else { return }
        addresses[Int(next)] = address
        next = (next &+ 1) & 7
    }
}
