import Foundation

/// `contacts.csv`: one row per sensor event, the format the Herald reference apps write and the
/// Herald analysis scripts read. Markers 1-7 sit in their own columns so a script can filter on
/// `read==2`, `measure==3` and so on.
public enum ContactLog {
    public static let fileName = "contacts.csv"
    public static let header = "time,sensor,id,detect,read,measure,share,visit,detectHerald,delete,data"

    /// The rows one event becomes (a share of several payloads is one row each; `receive` is not
    /// part of this log, as in the reference apps).
    public static func lines(for e: SensorEventRecord) -> [String] {
        let prefix = logTimestamp(e.time) + "," + e.sensor.rawValue + "," + heraldCSV(e.target)
        switch e.kind {
        case .detect:
            return [prefix + ",1,,,,,,,"]
        case .read:
            return [prefix + ",,2,,,,,," + heraldCSV(payloadShortName(e.payload))]
        case .measure:
            return [prefix + ",,,3,,,,," + heraldCSV(proximityDescription(rssi: e.rssi, txPower: e.txPower))]
        case .share:
            return e.sharedPayloads.map { prefix + ",,,,4,,,," + heraldCSV(payloadShortName($0)) }
        case .visit:
            // A visit has no target: the id column stays empty.
            return [logTimestamp(e.time) + "," + e.sensor.rawValue + ",,,,,,5,,," + heraldCSV(e.location ?? "")]
        case .detectHerald:
            return [prefix + ",,,,,,6,,"]
        case .delete:
            return [prefix + ",,,,,,,7,"]
        case .receive:
            return []
        }
    }

    /// `RSSI:-66.0`, with `[BLETransmitPower:7.0]` appended when the advert carried a Tx power
    /// (the reference `Proximity.description` with its calibration).
    public static func proximityDescription(rssi: Double?, txPower: Double?) -> String {
        var s = "RSSI:" + (rssi.map(javaDouble) ?? "NULL")
        if let txPower { s += "[BLETransmitPower:" + javaDouble(txPower) + "]" }
        return s
    }
}

/// `payloads.csv`: `time,target,payload` with every payload read in full, lowercase hex. This is what
/// `herald match` reads (`ContactMatcher`), so its shape must not change.
public enum PayloadLog {
    public static let fileName = "payloads.csv"
    public static let header = "time,target,payload"

    public static func lines(for e: SensorEventRecord) -> [String] {
        guard e.kind == .read, !e.payload.isEmpty else { return [] }
        var hex = ""
        hex.reserveCapacity(e.payload.count * 2)
        let digits = Array("0123456789abcdef")
        for b in e.payload { hex.append(digits[Int(b >> 4)]); hex.append(digits[Int(b & 0xF)]) }
        return [logTimestamp(e.time) + "," + heraldCSV(e.target) + "," + hex]
    }
}

/// Running count, mean, sample standard deviation, min and max (Welford), as Herald's `Sample`.
public struct RunningSample: Equatable, Sendable {
    public private(set) var count = 0
    public private(set) var mean = 0.0
    private var m2 = 0.0
    public private(set) var min = Double.infinity
    public private(set) var max = -Double.infinity

    public init() {}

    public mutating func add(_ x: Double) {
        count += 1
        let delta = x - mean
        mean += delta / Double(count)
        m2 += delta * (x - mean)
        min = Swift.min(min, x)
        max = Swift.max(max, x)
    }

    /// Sample (n-1) standard deviation; nil below two values.
    public var standardDeviation: Double? { count > 1 ? (m2 / Double(count - 1)).squareRoot() : nil }
    /// Population standard deviation; nil when empty.
    public var populationStandardDeviation: Double? { count > 0 ? (m2 / Double(count)).squareRoot() : nil }
}

/// `statistics.csv`: per peer payload, the seconds between successive readings of it
/// (`payload,count,mean,sd,min,max`). Rewritten whole, as the reference apps do.
///
/// A read ties a target to a payload; later measurements of that target count as readings of the
/// payload, shares count for each shared payload. The first reading only starts the clock; a peer
/// appears once it has two intervals (the reference omits rows whose standard deviation is undefined).
public struct StatisticsLog: Sendable {
    public static let fileName = "statistics.csv"
    public static let header = "payload,count,mean,sd,min,max"

    public let ownShortName: String
    private var targetToPayload: [String: String] = [:]
    private var lastSeen: [String: Date] = [:]
    public private(set) var samples: [String: RunningSample] = [:]

    public init(ownPayload: [UInt8]) { ownShortName = payloadShortName(ownPayload) }

    /// Folds one event in; true if the file content changed.
    public mutating func add(_ e: SensorEventRecord) -> Bool {
        switch e.kind {
        case .read:
            let name = payloadShortName(e.payload)
            targetToPayload[e.target] = name
            return reading(name, at: e.time)
        case .measure:
            guard let name = targetToPayload[e.target] else { return false }
            return reading(name, at: e.time)
        case .share:
            var changed = false
            for p in e.sharedPayloads { changed = reading(payloadShortName(p), at: e.time) || changed }
            return changed
        default:
            return false
        }
    }

    private mutating func reading(_ name: String, at time: Date) -> Bool {
        defer { lastSeen[name] = time }
        guard let previous = lastSeen[name] else { samples[name] = RunningSample(); return false }
        samples[name, default: RunningSample()].add(time.timeIntervalSince(previous))
        return true
    }

    public var content: String {
        var s = Self.header + "\n"
        for name in samples.keys.sorted() where name != ownShortName {
            let x = samples[name]!
            guard let sd = x.standardDeviation else { continue }
            s += "\(heraldCSV(name)),\(x.count),\(javaDouble(x.mean)),\(javaDouble(sd)),\(javaDouble(x.min)),\(javaDouble(x.max))\n"
        }
        return s
    }
}

/// `detection.csv`: one line, `device name,OS,OS version,own short name,peer short names sorted…`,
/// which the Herald analysis scripts read to name each phone and know its broadcast id.
public struct DetectionLog: Sendable {
    public static let fileName = "detection.csv"

    public var deviceName: String
    public var operatingSystem: String
    public var operatingSystemVersion: String
    public let ownShortName: String
    public private(set) var peers: Set<String> = []

    public init(deviceName: String, operatingSystem: String, operatingSystemVersion: String, ownPayload: [UInt8]) {
        self.deviceName = deviceName
        self.operatingSystem = operatingSystem
        self.operatingSystemVersion = operatingSystemVersion
        ownShortName = payloadShortName(ownPayload)
    }

    /// True if a new peer appeared (the file needs rewriting).
    public mutating func add(_ e: SensorEventRecord) -> Bool {
        var names: [String] = []
        switch e.kind {
        case .read: names = [payloadShortName(e.payload)]
        case .share: names = e.sharedPayloads.map(payloadShortName)
        default: return false
        }
        var changed = false
        for n in names where n != ownShortName && !n.isEmpty {
            changed = peers.insert(n).inserted || changed
        }
        return changed
    }

    public var content: String {
        var parts = [heraldCSV(deviceName), heraldCSV(operatingSystem), heraldCSV(operatingSystemVersion), heraldCSV(ownShortName)]
        parts += peers.sorted()
        return parts.joined(separator: ",") + "\n"
    }
}
