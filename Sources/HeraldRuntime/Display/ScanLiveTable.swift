import Foundation

/// `herald scan`'s live view on a terminal: one row per device (address, kind, payload, RSSI now and
/// mean, advert interval, seconds since last seen), strongest first, redrawn in place; colour by kind
/// when the terminal has it. Off a terminal the scan prints plain lines instead (`AdvertisementRecord`).
public struct ScanLiveTable {
    public var colour: Bool
    /// Rows beyond this are summarised in one line, so a busy room does not scroll the header away.
    public var maxRows: Int

    public init(colour: Bool, maxRows: Int = 40) {
        self.colour = colour
        self.maxRows = maxRows
    }

    /// Colour when the terminal is not `dumb` and `NO_COLOR` (no-color.org) is not set.
    public static func terminalHasColour(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        environment["NO_COLOR"] == nil && (environment["TERM"].map { $0 != "dumb" && !$0.isEmpty } ?? false)
    }

    /// What the rows are sorted by; the scan switches it on a key press (`ScanSortKey.after(keyPress:)`).
    public var sortKey: ScanSortKey = .rssi
    /// Which devices to show (`herald scan`'s filter options).
    public var filter = ScanFilter()

    /// By `key`, ties broken by address. RSSI: strongest first by the latest RSSI (then mean RSSI), so a
    /// device brought close to the antenna rises to the top; last seen: most recent first; interval:
    /// shortest first (devices without one last); address: ascending.
    public static func sorted(_ devices: [ScanDeviceSummary], by key: ScanSortKey = .rssi) -> [ScanDeviceSummary] {
        devices.sorted { a, b in
            switch key {
            case .rssi:
                let ka = (a.rssiNow ?? -999, a.rssi?.mean ?? -999), kb = (b.rssiNow ?? -999, b.rssi?.mean ?? -999)
                if ka != kb { return ka > kb }
            case .lastSeen:
                if a.lastSeen != b.lastSeen { return a.lastSeen > b.lastSeen }
            case .interval:
                let ia = a.interval?.mean ?? .infinity, ib = b.interval?.mean ?? .infinity
                if ia != ib { return ia < ib }
            case .address:
                break
            }
            return a.address < b.address
        }
    }

    /// The whole screen: a title line, the header, the rows. `elapsed`: seconds since the scan started.
    public func render(_ summary: ScanSummary, elapsed: Double, title: String) -> String {
        let devices = Self.sorted(summary.devices.filter(filter.matches), by: sortKey)
        func f(_ v: Double?, _ digits: Int = 0) -> String { v.map { String(format: "%.\(digits)f", $0) } ?? "-" }
        var rows: [[String]] = [["ADDRESS", "KIND", "PAYLOAD", "RSSI", "MEAN", "INTERVAL ms", "LAST SEEN", "RSSI TREND", "NAME"]]
        for d in devices.prefix(maxRows) {
            let payload = d.payloadText ?? (d.payloadError == nil ? "-" : "read failed")
            let ago = max(0, elapsed - d.lastSeen)
            rows.append([d.address, d.kind.description, payload, d.rssiNow.map(String.init) ?? "-", f(d.rssi?.mean, 1),
                         f(d.interval?.mean), String(format: "%.1f s ago", ago), rssiSparkline(summary.recentRSSI(d)), d.name ?? ""])
        }
        var widths = [Int](repeating: 0, count: rows[0].count)
        for r in rows { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
        var out = String(format: "%@ — %d device(s), %d report(s), %.0f s — sorted by %@ (keys: r RSSI, l last seen, i interval, a address)\n",
                         title, devices.count, summary.reports, elapsed, sortKey.label)
        for (n, r) in rows.enumerated() {
            var line = r.enumerated().map { i, c in i == r.count - 1 ? c : c + String(repeating: " ", count: widths[i] - c.count) }
                .joined(separator: "  ")
            while line.last == " " { line.removeLast() }
            if colour {
                if n == 0 { line = "\u{1B}[1m" + line + "\u{1B}[0m" } else { line = Self.paint(line, devices[n - 1].kind) }
            }
            out += line + "\n"
        }
        if devices.count > maxRows { out += "… and \(devices.count - maxRows) more (weaker) device(s)\n" }
        return out
    }

    /// Home the cursor, draw, clear what is left of the previous frame: redrawn in place, no flicker.
    public func frame(_ summary: ScanSummary, elapsed: Double, title: String) -> String {
        "\u{1B}[H" + render(summary, elapsed: elapsed, title: title).replacingOccurrences(of: "\n", with: "\u{1B}[K\n") + "\u{1B}[J"
    }

    static func paint(_ line: String, _ kind: DeviceKind) -> String {
        let code: String
        switch kind {
        case .heraldWearable, .herald: code = "32"       // green
        case .venueBeacon: code = "36"                   // cyan
        case .android, .ios: code = "33"                 // yellow: Herald phones
        case .appleOther: code = "35"                    // magenta
        case .other: code = "2"                          // dim
        }
        return "\u{1B}[\(code)m" + line + "\u{1B}[0m"
    }
}
