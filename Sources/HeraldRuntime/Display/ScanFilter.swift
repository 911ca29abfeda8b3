import Foundation

/// `herald scan`'s filters (`--name`, `--service`, `--address`, `--kind`, `--min-rssi`): which devices
/// the live table, the per-report lines, the CSV, the summary and the report show. Every report still
/// feeds the summary, so a device's kind (known once its payload is read) and name (often only in its
/// scan response) are judged on all it sent; a device is shown from the first report at which it matches.
public struct ScanFilter: Equatable, Sendable {
    /// Case-insensitive part of the local name.
    public var name: String?
    /// A service UUID the device advertises: `fcf6` or the 128-bit text form (case-insensitive, an
    /// optional `0x`).
    public var service: String?
    /// `AA:BB:CC:DD:EE:FF` (case-insensitive).
    public var address: String?
    public var kind: DeviceKind?
    /// dBm: reports weaker than this are not shown, nor devices whose latest report was.
    public var minRSSI: Int?

    public init(name: String? = nil, service: String? = nil, address: String? = nil, kind: DeviceKind? = nil, minRSSI: Int? = nil) {
        self.name = name
        self.service = service.map(Self.normalised(service:))
        self.address = address?.uppercased()
        self.kind = kind
        self.minRSSI = minRSSI
    }

    public var isEmpty: Bool { self == ScanFilter() }

    public static func normalised(service: String) -> String {
        var s = service.lowercased()
        if s.hasPrefix("0x") { s.removeFirst(2) }
        // The 16-bit form of a SIG-based 128-bit UUID, as `BluetoothUUID.text` shows those.
        if s.count == 36, s.hasPrefix("0000"), s.hasSuffix("-0000-1000-8000-00805f9b34fb") {
            s = String(s.dropFirst(4).prefix(4))
        }
        return s
    }

    /// Whether the device, as known so far, is one to show.
    public func matches(_ d: ScanDeviceSummary) -> Bool {
        if let address, d.address.uppercased() != address { return false }
        if let kind, d.kind != kind { return false }
        if let name, !(d.name?.lowercased().contains(name.lowercased()) ?? false) { return false }
        if let service, !d.services.contains(service) { return false }
        if let minRSSI, (d.rssiNow ?? Int.min) < minRSSI { return false }
        return true
    }

    /// Whether one report of a device (known so far as `d`) is to be shown: the device matches and the
    /// report is strong enough.
    public func matches(report rssi: Int?, of d: ScanDeviceSummary) -> Bool {
        if let minRSSI, (rssi ?? Int.min) < minRSSI { return false }
        var device = d
        device.rssiNow = rssi ?? d.rssiNow
        return matches(device)
    }
}

/// The live table's sort keys, switched with a key press while it runs.
public enum ScanSortKey: String, CaseIterable, Sendable {
    case rssi, lastSeen = "last-seen", interval, address

    /// The key that selects it in the live table.
    public var keyPress: Character {
        switch self {
        case .rssi: "r"
        case .lastSeen: "l"
        case .interval: "i"
        case .address: "a"
        }
    }

    public var label: String {
        switch self {
        case .rssi: "RSSI"
        case .lastSeen: "last seen"
        case .interval: "interval"
        case .address: "address"
        }
    }

    /// `r`, `l`, `i`, `a` pick a key; `s` moves to the next one.
    public func after(keyPress c: Character) -> ScanSortKey {
        if c == "s" { return Self.allCases[(Self.allCases.firstIndex(of: self)! + 1) % Self.allCases.count] }
        return Self.allCases.first { $0.keyPress == c } ?? self
    }
}

/// `▁▂▃▄▅▆▇█` from RSSI values: −100 dBm and below is the lowest bar, −30 and above the highest.
public func rssiSparkline(_ values: [Int]) -> String {
    let bars = Array("▁▂▃▄▅▆▇█")
    return String(values.map { v in bars[min(bars.count - 1, max(0, (v + 100) * bars.count / 71))] })
}
