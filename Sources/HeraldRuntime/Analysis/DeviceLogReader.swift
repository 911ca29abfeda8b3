import Foundation

/// One device's Herald logs as the efficacy analysis needs them: who the device is (from
/// `detection.csv`) and every reading of a peer (from `contacts.csv`), by the peer's short name.
public struct DeviceLog: Equatable {
    public struct Reading: Equatable {
        /// Unix milliseconds.
        public var time: Int64
        /// The peer's payload short name.
        public var peer: String
    }

    public var directory: String
    public var deviceName: String
    public var operatingSystem: String
    public var operatingSystemVersion: String
    /// This device's own payload short name (its "broadcast id"); nil if `detection.csv` is missing.
    public var shortName: String?
    /// Short names of the payloads it served later (`herald wearable`'s Simple payload changes every
    /// 360 s), from its log.txt lines `own payload NAME`: readings of these are readings of this device.
    public var laterShortNames: [String] = []
    /// Every short name this device went by.
    public var shortNames: [String] { (shortName.map { [$0] } ?? []) + laterShortNames.filter { $0 != shortName } }
    /// Every short name of a payload this device served (`served-payloads.csv`), with when it was
    /// first served: a rotating payload has one per period. Empty for the reference apps' logs.
    public var servedNames: [(time: Int64, name: String)] = []
    /// The first payload it served, as bytes (`served-payloads.csv`'s hex column), for showing it decoded.
    public var firstServedPayload: [UInt8]?
    public var readings: [Reading] = []
    /// Measurements of targets never tied to a payload by a read (cannot be attributed to a peer).
    public var unattributedMeasurements = 0
    /// First and last row time of `contacts.csv` (any kind), Unix milliseconds.
    public var firstTime: Int64?
    public var lastTime: Int64?
    public var rows = 0

    /// Every short name the device claims: its `detection.csv` name, each payload it served
    /// (`served-payloads.csv`) and each it announced in log.txt (`own payload NAME`).
    public var ownNames: Set<String> {
        var names = Set(servedNames.map(\.name))
        names.formUnion(shortNames)
        return names
    }

    public static func == (a: DeviceLog, b: DeviceLog) -> Bool {
        a.directory == b.directory && a.deviceName == b.deviceName && a.operatingSystem == b.operatingSystem
            && a.operatingSystemVersion == b.operatingSystemVersion && a.shortName == b.shortName
            && a.servedNames.map(\.time) == b.servedNames.map(\.time) && a.servedNames.map(\.name) == b.servedNames.map(\.name)
            && a.readings == b.readings && a.unattributedMeasurements == b.unattributedMeasurements
            && a.firstTime == b.firstTime && a.lastTime == b.lastTime && a.rows == b.rows
    }

    /// `Model (OS version)` for tables, falling back to the directory name.
    public var label: String {
        let base = deviceName.isEmpty ? (directory as NSString).lastPathComponent : deviceName
        return shortName.map { "\(base) [\($0)]" } ?? base
    }
}

public struct AnalysisError: Error, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}

/// Reads log directories written by `LogDirectory` or by the Herald reference apps. Bad lines are
/// collected (file and line number) and skipped; a file with no usable line at all is refused
/// (`MalformedFile`); nothing in a file can make the reader trap (Fuzz/AnalyseLogs.swift).
public enum DeviceLogReader {
    /// The text log's marker before each payload short name the device served (`WearableCommand` writes it).
    public static let ownPayloadMarker = "own payload "

    /// Short names after `own payload ` in log.txt lines, in order, without repeats.
    static func ownShortNames(inTextLog text: String) -> [String] {
        var names: [String] = []
        for line in text.split(separator: "\n") {
            guard let r = line.range(of: ownPayloadMarker) else { continue }
            let name = line[r.upperBound...].prefix { !$0.isWhitespace && $0 != "," && $0 != "\"" && $0 != ";" }
            if !name.isEmpty, !names.contains(String(name)) { names.append(String(name)) }
        }
        return names
    }

    public static func load(_ directory: String) throws(AnalysisError) -> (log: DeviceLog, malformed: [MalformedLine]) {
        var bad: [MalformedLine] = []
        var log = DeviceLog(directory: directory, deviceName: "", operatingSystem: "", operatingSystemVersion: "")
        // A file that is there is read (bytes that are not UTF-8 become U+FFFD, so its parser names
        // the line); one with lines but none usable is refused (MalformedFile), a missing one noted.
        func present(_ path: String) throws(AnalysisError) -> String? {
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            do { return try CommandMessage.readText(path) } catch { throw AnalysisError(error.description) }
        }
        func refuse(_ path: String, _ text: String, usable: Int, _ format: String) throws(AnalysisError) {
            guard text.contains(where: { !$0.isWhitespace }),
                  let why = MalformedFile.refusal(path: path, usable: usable, malformed: bad, format: format) else { return }
            throw AnalysisError(why)
        }
        let detectionPath = (directory as NSString).appendingPathComponent(DetectionLog.fileName)
        if let text = try present(detectionPath) {
            parseDetection(text, path: detectionPath, into: &log, malformed: &bad)
            try refuse(detectionPath, text, usable: log.shortName == nil ? 0 : 1, "a Herald detection log")
        } else {
            bad.append(.init(file: detectionPath, line: 0, reason: "missing: the device's own short name is unknown, so no other device can be matched to it"))
        }
        let textPath = (directory as NSString).appendingPathComponent(TextLog.fileName)
        if let text = try present(textPath) { log.laterShortNames = ownShortNames(inTextLog: text) }
        let servedPath = (directory as NSString).appendingPathComponent(ServedPayloadLog.fileName)
        if let text = try present(servedPath) {
            parseServed(text, path: servedPath, into: &log, malformed: &bad)
            try refuse(servedPath, text, usable: log.servedNames.count, "a Herald served-payloads log")
        }
        let contactsPath = (directory as NSString).appendingPathComponent(ContactLog.fileName)
        let text: String
        do { text = try CommandMessage.readText(contactsPath) } catch { throw AnalysisError(error.description) }
        parseContacts(text, path: contactsPath, into: &log, malformed: &bad)
        try refuse(contactsPath, text, usable: log.rows, "a Herald contacts log")
        return (log, bad)
    }

    static func parseDetection(_ text: String, path: String, into log: inout DeviceLog, malformed: inout [MalformedLine]) {
        let lines = ContactMatcher.lines(text)
        guard let i = lines.firstIndex(where: { !$0.isEmpty }) else {
            malformed.append(.init(file: path, line: 1, reason: "empty: expected name,OS,version,shortName[,peers…]"))
            return
        }
        let f = csvFields(lines[i])
        guard f.count >= 4, !f[3].isEmpty else {
            malformed.append(.init(file: path, line: i + 1, reason: "expected name,OS,version,shortName[,peers…], found \(f.count) column(s)"))
            return
        }
        log.deviceName = f[0]
        log.operatingSystem = f[1]
        log.operatingSystemVersion = f[2]
        log.shortName = f[3]
    }

    /// `time,shortName,payload` rows (`ServedPayloadLog`).
    static func parseServed(_ text: String, path: String, into log: inout DeviceLog, malformed: inout [MalformedLine]) {
        var lineNumber = 0
        for line in ContactMatcher.lines(text) {
            lineNumber += 1
            if line.isEmpty || (lineNumber == 1 && line.hasPrefix("time,")) { continue }
            let f = csvFields(line)
            guard f.count == 3, let t = parseTime(f[0]), !f[1].isEmpty else {
                malformed.append(.init(file: path, line: lineNumber, reason: "expected time,shortName,payload"))
                continue
            }
            log.servedNames.append((t, f[1]))
            if log.firstServedPayload == nil { log.firstServedPayload = octets(hex: f[2]).flatMap { $0.isEmpty ? nil : $0 } }
        }
    }

    /// Column positions, from the header when there is one: older Herald apps wrote nine columns
    /// (no detectHerald/delete), current ones eleven.
    struct Layout {
        var count = 11
        var time = 0, id = 2, data = 10
        /// Column of each marker 1…7 (nil when the log has no such column).
        var markers: [Int?] = [3, 4, 5, 6, 7, 8, 9]

        init() {}
        init?(header: [String]) {
            let names = ["detect", "read", "measure", "share", "visit", "detectHerald", "delete"]
            guard let t = header.firstIndex(of: "time"), let i = header.firstIndex(of: "id"), let d = header.firstIndex(of: "data") else { return nil }
            count = header.count; time = t; id = i; data = d
            markers = names.map { header.firstIndex(of: $0) }
        }
    }

    /// `yyyy-MM-dd HH:mm:ss[.SSS]` with a zone, or without one (older app logs), taken as UTC.
    static func parseTime(_ s: String) -> Int64? {
        if let t = ContactMatcher.parseLogTime(s) { return t }
        guard s.utf8.count == 19 || s.utf8.count == 23 else { return nil }
        return ContactMatcher.parseLogTime(s + "+0000")
    }

    static func parseContacts(_ text: String, path: String, into log: inout DeviceLog, malformed: inout [MalformedLine]) {
        var targetToPeer: [String: String] = [:]
        var measurements: [(time: Int64, target: String)] = []
        var lineNumber = 0
        var layout = Layout()
        let markers = ["1", "2", "3", "4", "5", "6", "7"]
        for line in ContactMatcher.lines(text) {
            lineNumber += 1
            if line.isEmpty { continue }
            func bad(_ reason: String) { malformed.append(.init(file: path, line: lineNumber, reason: reason)) }
            if lineNumber == 1 && line.hasPrefix("time,") {
                if let l = Layout(header: csvFields(line)) { layout = l } else { bad("header lacks time, id or data; assuming the 11-column layout") }
                continue
            }
            let f = csvFields(line)
            guard f.count == layout.count else { bad("expected \(layout.count) columns, found \(f.count)"); continue }
            guard let t = parseTime(f[layout.time]) else { bad("bad time \"\(f[layout.time].prefix(40))\""); continue }
            // Exactly one marker column holds its own digit.
            var kind: Int?
            var markerError: String?
            for (c, column) in layout.markers.enumerated() {
                guard let column, !f[column].isEmpty else { continue }
                if f[column] != markers[c] { markerError = "column \(column + 1) holds \"\(f[column].prefix(10))\", expected \(markers[c]) or nothing" }
                else if kind != nil { markerError = "more than one event marker" }
                else { kind = c + 1 }
            }
            if let markerError { bad(markerError); continue }
            guard let kind else { bad("no event marker"); continue }
            log.rows += 1
            log.firstTime = min(log.firstTime ?? t, t)
            log.lastTime = max(log.lastTime ?? t, t)
            let target = f[layout.id], data = f[layout.data]
            switch kind {
            case 2:
                guard !data.isEmpty else { bad("read row without a payload short name"); continue }
                targetToPeer[target] = data
            case 3:
                guard ContactMatcher.rssiValue(Substring(data)) != nil else { bad("measure row without RSSI:<number>"); continue }
                measurements.append((t, target))
            case 4:
                guard !data.isEmpty else { bad("share row without a payload short name"); continue }
                log.readings.append(.init(time: t, peer: data))
            default:
                break
            }
        }
        // As the reference scripts do, a target's reads name it for all of its measurements, earlier ones too.
        for m in measurements {
            if let peer = targetToPeer[m.target] { log.readings.append(.init(time: m.time, peer: peer)) }
            else { log.unattributedMeasurements += 1 }
        }
        log.readings.sort { $0.time < $1.time }
    }

    /// Splits one CSV line; a field in double quotes may hold commas (the Herald apps quote but do not
    /// double inner quotes, so a quote ends the field only before a comma or the end of the line).
    static func csvFields(_ line: Substring) -> [String] {
        var out: [String] = []
        let u = Array(line.utf8)
        var i = 0
        while true {
            if i < u.count, u[i] == 34 {
                var j = i + 1
                while j < u.count, !(u[j] == 34 && (j + 1 == u.count || u[j + 1] == 44)) { j += 1 }
                out.append(String(decoding: u[(i + 1)..<min(j, u.count)], as: UTF8.self))
                i = min(j + 1, u.count)
            } else {
                var j = i
                while j < u.count, u[j] != 44 { j += 1 }
                out.append(String(decoding: u[i..<j], as: UTF8.self))
                i = j
            }
            if i >= u.count { break }
            i += 1 // the comma
            if i == u.count { out.append(""); break }
        }
        return out
    }
}
