import Foundation
import BluetoothHost
import Herald

/// One matching key to look for (typically a published key of an infected user, one per day).
public struct MatchingKeyEntry: Equatable {
    public var day: Int?
    public var key: [UInt8]
    public var base64: String { Data(key).base64EncodedString() }
    public init(day: Int?, key: [UInt8]) { self.day = day; self.key = key }
}

/// A line of input that could not be used, with where it is.
public struct MalformedLine: Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var reason: String
    public var description: String { "\(file):\(line): \(reason)" }
}

/// What `herald match` found for one matching key in one log directory.
public struct ContactMatch: Equatable {
    public var logDirectory: String
    public var keyIndex: Int
    public var day: Int?
    public var matchingKey: String
    /// Distinct contact identifiers of this key seen.
    public var contactIdentifiers: Int
    public var firstSeen: Int64
    public var lastSeen: Int64
    public var count: Int
    public var rssiCount: Int
    public var rssiMean: Double?
    public var rssiMax: Double?
    public var durationSeconds: Double { Double(lastSeen - firstSeen) / 1000 }
}

/// Matching keys file: `herald keys export` output (`day,date,matchingKey`), or one Base64 key per line.
public enum MatchingKeysFile {
    public static func load(_ path: String) throws -> (keys: [MatchingKeyEntry], malformed: [MalformedLine]) {
        let text: String
        do { text = try CommandMessage.readText(path, what: "matching keys file") } catch { throw KeyToolError(error.description) }
        var keys: [MatchingKeyEntry] = [], bad: [MalformedLine] = []
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("day,") || line.hasPrefix("#") { continue }
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            let keyText = String(fields.last!)
            var day: Int? = nil
            if fields.count == 3 {
                guard let d = Int(fields[0]) else { bad.append(.init(file: path, line: i + 1, reason: "day is not a number")); continue }
                day = d
            } else if fields.count != 1 {
                bad.append(.init(file: path, line: i + 1, reason: "expected day,date,matchingKey or one Base64 key")); continue
            }
            guard let data = Data(base64Encoded: keyText), data.count == 32 else {
                bad.append(.init(file: path, line: i + 1, reason: "matching key is not 32 bytes of Base64")); continue
            }
            keys.append(MatchingKeyEntry(day: day, key: [UInt8](data)))
        }
        return (keys, bad)
    }
}

/// Every contact identifier of a set of matching keys (241 per key), hashed for lookup.
public struct ContactIdentifierIndex {
    struct ID: Hashable { var a: UInt64; var b: UInt64 }
    var table: [ID: Int32] = [:]
    public private(set) var derived = 0
    public private(set) var seconds: Double = 0

    public init(keys: [MatchingKeyEntry]) {
        let start = DispatchTime.now().uptimeNanoseconds
        table.reserveCapacity(keys.count * (SimpleKeySchedule.periods + 1))
        for (index, entry) in keys.enumerated() {
            var mk = Digest32(repeating: 0)
            for i in 0..<32 { mk[i] = entry.key[i] }
            SimpleKeySchedule.forEachContactIdentifier(matchingKey: mk) { _, id in
                table[Self.id(id)] = Int32(index)
                derived += 1
            }
        }
        seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    static func id(_ c: ContactIdentifier) -> ID {
        var a: UInt64 = 0, b: UInt64 = 0
        for i in 0..<8 { a = a << 8 | UInt64(c[i]); b = b << 8 | UInt64(c[8 + i]) }
        return ID(a: a, b: b)
    }

    /// Index of the matching key whose identifier this is.
    public func lookup(_ c: ContactIdentifier) -> Int? { table[Self.id(c)].map(Int.init) }

    /// Derivation alone (no table), for measuring: returns (identifiers, seconds).
    public static func benchmarkDerivation(keys: [MatchingKeyEntry]) -> (Int, Double) {
        let start = DispatchTime.now().uptimeNanoseconds
        var n = 0
        var checksum: UInt8 = 0
        for entry in keys {
            var mk = Digest32(repeating: 0)
            for i in 0..<32 { mk[i] = entry.key[i] }
            SimpleKeySchedule.forEachContactIdentifier(matchingKey: mk) { _, id in n += 1; checksum ^= id[0] }
        }
        let s = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        if checksum == 0x5a && n < 0 { print(checksum) } // keep the work observable
        return (n, s)
    }
}

/// Reads Herald logger output (`payloads.csv`, `contacts.csv`) and matches payloads against an index.
public enum ContactMatcher {
    /// Parses `yyyy-MM-dd HH:mm:ss.SSSZ` (e.g. `2026-11-21 10:00:00.123+0000`; milliseconds optional,
    /// `Z` accepted) to Unix milliseconds, without Foundation's slow formatters.
    public static func parseLogTime<S: StringProtocol>(_ s: S) -> Int64? {
        if let r = s.utf8.withContiguousStorageIfAvailable({ parseLogTime(utf8: $0) }) { return r }
        return Array(s.utf8).withUnsafeBufferPointer { parseLogTime(utf8: $0) }
    }

    static func parseLogTime(utf8 u: UnsafeBufferPointer<UInt8>) -> Int64? {
        var i = 0
        func num(_ n: Int) -> Int? {
            guard i + n <= u.count else { return nil }
            var v = 0
            for k in 0..<n { let c = u[i + k]; guard c >= 48 && c <= 57 else { return nil }; v = v * 10 + Int(c - 48) }
            i += n
            return v
        }
        func lit(_ c: UInt8) -> Bool { guard i < u.count, u[i] == c else { return false }; i += 1; return true }
        guard let y = num(4), lit(45), let mo = num(2), lit(45), let d = num(2), lit(32) || lit(84),
              let h = num(2), lit(58), let mi = num(2), lit(58), let sec = num(2) else { return nil }
        var ms = 0
        if lit(46) {
            let fracStart = i
            var v = 0, digits = 0
            while i < u.count, u[i] >= 48, u[i] <= 57 { if digits < 3 { v = v * 10 + Int(u[i] - 48); digits += 1 }; i += 1 }
            guard i > fracStart else { return nil }
            while digits < 3 { v *= 10; digits += 1 }
            ms = v
        }
        var offset = 0
        if lit(90) {
        } else if i < u.count, u[i] == 43 || u[i] == 45 {
            let sign = u[i] == 45 ? -1 : 1
            i += 1
            guard let oh = num(2) else { return nil }
            _ = lit(58)
            guard let om = num(2) else { return nil }
            offset = sign * (oh * 60 + om) * 60
        } else { return nil }
        guard i == u.count, (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, sec < 61 else { return nil }
        // Days from civil (proleptic Gregorian), H. Hinnant's algorithm.
        let yy = mo <= 2 ? y - 1 : y
        let era = (yy >= 0 ? yy : yy - 399) / 400
        let yoe = yy - era * 400
        let doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146097 + doe - 719468
        let seconds = Int64(days) * 86400 + Int64(h * 3600 + mi * 60 + sec) - Int64(offset)
        return seconds * 1000 + Int64(ms)
    }

    public static func formatLogTime(_ ms: Int64) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd HH:mm:ss.SSSZ"
        return f.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }

    struct Group { var ids = Set<ContactIdentifierIndex.ID>(); var first = Int64.max; var last = Int64.min; var count = 0; var targets = Set<String>() }
    struct RSSIStats { var count = 0; var sum = 0.0; var max = -Double.infinity }

    /// Matches every payload in each directory's `payloads.csv`; RSSI comes from `contacts.csv`
    /// measure rows of the same target id.
    public static func match(index: ContactIdentifierIndex, keys: [MatchingKeyEntry], logDirectories: [String])
        throws -> (matches: [ContactMatch], malformed: [MalformedLine], payloadRows: Int) {
        var matches: [ContactMatch] = [], malformed: [MalformedLine] = []
        var rows = 0
        for dir in logDirectories {
            let payloadsPath = (dir as NSString).appendingPathComponent("payloads.csv")
            let text: String
            do { text = try CommandMessage.readText(payloadsPath) } catch { throw KeyToolError(error.description) }
            var groups: [Int: Group] = [:]
            var lineNumber = 0
            let rowsBefore = rows
            for line in lines(text) {
                lineNumber += 1
                if line.isEmpty || (lineNumber == 1 && line.hasPrefix("time,")) { continue }
                let f = fields(line, maxSplits: Int.max)
                guard f.count == 3 else { malformed.append(.init(file: payloadsPath, line: lineNumber, reason: "expected time,target,payload")); continue }
                guard let t = parseLogTime(f[0]) else { malformed.append(.init(file: payloadsPath, line: lineNumber, reason: "bad time \"\(f[0].prefix(40))\"")); continue }
                guard let payload = octets(hex: f[2]) else { malformed.append(.init(file: payloadsPath, line: lineNumber, reason: "payload is not hex")); continue }
                rows += 1
                // Only Simple payloads carry contact identifiers; others (beacons …) are skipped.
                guard let first = payload.first, SimplePayload.protocolRange.contains(first) else { continue }
                let parsed: ContactIdentifier
                do {
                    parsed = try payload.withUnsafeBufferPointer { b throws(DecodeError) in try SimplePayload(parsing: Span(_unsafeElements: b)).contactIdentifier }
                } catch {
                    malformed.append(.init(file: payloadsPath, line: lineNumber, reason: "Simple payload does not parse: \(error)")); continue
                }
                guard let k = index.lookup(parsed) else { continue }
                var g = groups[k] ?? Group()
                g.ids.insert(ContactIdentifierIndex.id(parsed))
                g.first = min(g.first, t); g.last = max(g.last, t); g.count += 1
                g.targets.insert(String(f[1]))
                groups[k] = g
            }
            if text.contains(where: { !$0.isWhitespace }),
               let why = MalformedFile.refusal(path: payloadsPath, usable: rows - rowsBefore, malformed: malformed, format: "a Herald payloads log") {
                throw KeyToolError(why)
            }
            let rssi = try readRSSI(dir: dir, malformed: &malformed)
            for (k, g) in groups.sorted(by: { $0.value.first < $1.value.first }) {
                var s = RSSIStats()
                for t in g.targets { if let r = rssi[t] { s.count += r.count; s.sum += r.sum; s.max = max(s.max, r.max) } }
                matches.append(ContactMatch(logDirectory: dir, keyIndex: k, day: keys[k].day, matchingKey: keys[k].base64,
                                            contactIdentifiers: g.ids.count, firstSeen: g.first, lastSeen: g.last, count: g.count,
                                            rssiCount: s.count, rssiMean: s.count > 0 ? s.sum / Double(s.count) : nil,
                                            rssiMax: s.count > 0 ? s.max : nil))
            }
        }
        return (matches, malformed, rows)
    }

    /// RSSI statistics per target id from `contacts.csv` measure rows (absent file: none).
    static func readRSSI(dir: String, malformed: inout [MalformedLine]) throws -> [String: RSSIStats] {
        let path = (dir as NSString).appendingPathComponent("contacts.csv")
        guard FileManager.default.fileExists(atPath: path) else { return [:] }
        let text: String
        do { text = try CommandMessage.readText(path) } catch { throw KeyToolError(error.description) }
        var out: [String: RSSIStats] = [:]
        var lineNumber = 0, usable = 0
        for line in lines(text) {
            lineNumber += 1
            if line.isEmpty || (lineNumber == 1 && line.hasPrefix("time,")) { continue }
            // time,sensor,id,detect,read,measure,share,visit,detectHerald,delete,data — data may hold commas.
            let f = fields(line, maxSplits: 10)
            guard f.count == 11 else { malformed.append(.init(file: path, line: lineNumber, reason: "expected 11 columns")); continue }
            guard parseLogTime(f[0]) != nil else { malformed.append(.init(file: path, line: lineNumber, reason: "bad time \"\(f[0].prefix(40))\"")); continue }
            usable += 1
            guard f[5] == "3" else { continue }
            guard let v = rssiValue(f[10]) else { malformed.append(.init(file: path, line: lineNumber, reason: "measure row without an RSSI:<number>")); continue }
            var s = out[String(f[2])] ?? RSSIStats()
            s.count += 1; s.sum += v; s.max = max(s.max, v)
            out[String(f[2])] = s
        }
        if text.contains(where: { !$0.isWhitespace }),
           let why = MalformedFile.refusal(path: path, usable: usable, malformed: malformed, format: "a Herald contacts log") {
            throw KeyToolError(why)
        }
        return out
    }

    /// Lines split on bytes, not Characters (grapheme breaking is the slow part of String.split),
    /// with a trailing CR removed.
    static func lines(_ text: String) -> [Substring] {
        text.utf8.split(separator: 10, omittingEmptySubsequences: false).map { raw in
            var end = raw.endIndex
            if raw.last == 13 { end = raw.index(before: end) }
            return Substring(raw[raw.startIndex..<end])
        }
    }

    static func fields(_ line: Substring, maxSplits: Int) -> [Substring] {
        line.utf8.split(separator: 44, maxSplits: maxSplits, omittingEmptySubsequences: false).map { Substring($0) }
    }

    /// The number after `RSSI:` in a contacts.csv data field.
    static func rssiValue(_ data: Substring) -> Double? {
        let u = data.utf8
        let tag = Array("RSSI:".utf8)
        var i = u.startIndex
        while i != u.endIndex {
            var j = i, k = 0
            while k < tag.count, j != u.endIndex, u[j] == tag[k] { j = u.index(after: j); k += 1 }
            if k == tag.count {
                var end = j
                while end != u.endIndex, (u[end] >= 48 && u[end] <= 57) || u[end] == 45 || u[end] == 43 || u[end] == 46 {
                    end = u.index(after: end)
                }
                return Double(Substring(u[j..<end]))
            }
            i = u.index(after: i)
        }
        return nil
    }

    /// A field as RFC 4180 writes it: quoted, with its quotes doubled, when it holds a comma, a
    /// quote or a line break (a log directory's path may).
    static func csvField(_ s: String) -> String {
        guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
        return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// The report as CSV.
    public static func csv(_ matches: [ContactMatch]) -> String {
        var s = "logDirectory,day,matchingKey,contactIdentifiers,firstSeen,lastSeen,durationSeconds,count,rssiCount,rssiMean,rssiMax\n"
        for m in matches {
            let mean = m.rssiMean.map { String(format: "%.1f", $0) } ?? ""
            let mx = m.rssiMax.map { String(format: "%.1f", $0) } ?? ""
            s += "\(csvField(m.logDirectory)),\(m.day.map(String.init) ?? ""),\(m.matchingKey),\(m.contactIdentifiers),\(formatLogTime(m.firstSeen)),\(formatLogTime(m.lastSeen)),\(String(format: "%.3f", m.durationSeconds)),\(m.count),\(m.rssiCount),\(mean),\(mx)\n"
        }
        return s
    }
}
