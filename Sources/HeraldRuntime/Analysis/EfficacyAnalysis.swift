import Foundation

/// The Fair Efficacy Formula terms of a multi-device test (A. Fowler, "A fair efficacy formula for
/// assessing the effectiveness of contact tracing applications", 2020; the Herald analysis scripts):
///
/// - detection: ordered pairs (observer, observed) with at least one reading, over n(n−1);
/// - continuity: over the contact event [start, end] cut into 30-second windows, the share of
///   (ordered pair, window) cells holding at least one reading;
/// - longevity: how much worse the last hour is than the first, as the absolute difference of the
///   two hours' missed-window percentages (0 means no degradation).
///
/// A reading is a measure row attributed to a peer (through a read of that target) or a share row,
/// as in the reference scripts; a peer is identified by its payload short name matching a short name
/// another device claims: the one in its `detection.csv` or any in its `served-payloads.csv` (every
/// payload it served, so readings stay attributable across payload rotations). A name two devices
/// claim is reported (`sharedNames`) and its readings are left out.
public struct EfficacyOptions: Equatable {
    /// Unix milliseconds; nil: the latest first row over all devices (the last phone to join).
    public var start: Int64?
    /// Unix milliseconds; nil: the earliest last row over all devices (the first phone to leave).
    public var end: Int64?
    public var windowMilliseconds: Int64 = 30_000
    public var longevityMilliseconds: Int64 = 3_600_000
    public init(start: Int64? = nil, end: Int64? = nil, windowMilliseconds: Int64 = 30_000, longevityMilliseconds: Int64 = 3_600_000) {
        self.start = start
        self.end = end
        self.windowMilliseconds = windowMilliseconds
        self.longevityMilliseconds = longevityMilliseconds
    }
}

public struct PairContinuity: Equatable {
    public var observer: Int
    public var observed: Int
    public var readings: Int
    /// Windows of the contact event with at least one reading.
    public var windows: Int
    /// `windows` over all windows of the event, 0…1.
    public var continuity: Double
}

/// A short name more than one analysed device claims (e.g. devices serving one fixed test payload):
/// nobody can tell whose its readings are.
public struct SharedShortName: Equatable {
    public var name: String
    /// Indices into `EfficacyReport.devices`.
    public var devices: [Int]
}

public struct EfficacyReport: Equatable {
    public var devices: [DeviceLog]
    public var start: Int64
    public var end: Int64
    public var windowMilliseconds: Int64
    /// Windows of the contact event per pair: (end − start) / window rounded to the nearest, at least 1;
    /// the last window takes the remainder, so each is at least half a window long.
    public var windowsPerPair: Int
    /// Every ordered pair, observer-major.
    public var pairs: [PairContinuity]
    public var maxPairs: Int
    public var detectedPairs: Int
    public var maxWindows: Int
    public var achievedWindows: Int
    /// Windows in each longevity period per pair (an hour is 120; fewer if the event is shorter).
    public var longevityWindowsPerPair: Int
    public var longevityStartWindows: Int
    public var longevityEndWindows: Int
    /// Readings of short names no analysed device claims (other apps, devices not analysed).
    public var unknownPeerReadings: Int
    /// Names claimed by more than one device, and the readings of them left out.
    public var sharedNames: [SharedShortName] = []
    public var sharedNameReadings = 0

    public var detection: Double { maxPairs > 0 ? Double(detectedPairs) / Double(maxPairs) : 0 }
    public var continuity: Double { maxWindows > 0 ? Double(achievedWindows) / Double(maxWindows) : 0 }
    /// Missed-window percentages of the first and last longevity periods.
    public var longevityStartError: Double { missed(longevityStartWindows) }
    public var longevityEndError: Double { missed(longevityEndWindows) }
    /// Percentage points; 0 is best.
    public var longevity: Double { abs(longevityStartError - longevityEndError) }

    private func missed(_ hits: Int) -> Double {
        let total = longevityWindowsPerPair * maxPairs
        return total > 0 ? 100 * (1 - Double(hits) / Double(total)) : 0
    }
}

public enum EfficacyAnalysis {
    public static func analyse(_ devices: [DeviceLog], options: EfficacyOptions = EfficacyOptions()) throws(AnalysisError) -> EfficacyReport {
        guard devices.count >= 2 else { throw AnalysisError("need the logs of at least two devices, got \(devices.count)") }
        guard options.windowMilliseconds > 0 else { throw AnalysisError("window must be positive") }
        let firsts = devices.compactMap(\.firstTime), lasts = devices.compactMap(\.lastTime)
        guard let start = options.start ?? firsts.max(), let end = options.end ?? lasts.min() else {
            throw AnalysisError("no contact rows to take the test period from; give --start and --end")
        }
        guard end > start else {
            throw AnalysisError("the test period is empty (start \(ContactMatcher.formatLogTime(start)), end \(ContactMatcher.formatLogTime(end))): the logs do not overlap; give --start and --end")
        }
        let w = options.windowMilliseconds
        // No window shorter than half a window: a remainder under half joins the last whole window (which
        // then holds up to 1.5 windows), one of half or more is a window of its own. Rounding up instead made
        // a run 27 ms longer than 80 s a ninth 10 s window, 27 ms long, that a pair read twice a second
        // missed (the rotation test's 94.44 % of 2026-12-01, docs/crowd-issue-39.md).
        let total = max(1, Int((end - start + w / 2) / w))
        let longevityWindows = min(Int((max(options.longevityMilliseconds, 0) + w - 1) / w), total)

        // Short name -> device index; a name two devices claim is ambiguous and left out.
        var byName: [String: Int] = [:], claimants: [String: [Int]] = [:]
        let ownNames = devices.map(\.ownNames)
        for (i, names) in ownNames.enumerated() { for s in names { claimants[s, default: []].append(i); byName[s] = i } }
        var shared: [SharedShortName] = []
        for (s, who) in claimants where who.count > 1 {
            byName[s] = nil
            shared.append(SharedShortName(name: s, devices: who))
        }
        shared.sort { $0.name < $1.name }
        var sharedReadings = 0

        var pairs: [PairContinuity] = []
        var detected = 0, achieved = 0, startHits = 0, endHits = 0, unknown = 0
        for (i, d) in devices.enumerated() {
            var windows: [Int: Set<Int>] = [:]
            var counts: [Int: Int] = [:]
            for r in d.readings where r.time >= start && r.time <= end {
                guard let j = byName[r.peer] else {
                    if claimants[r.peer, default: []].count > 1 { sharedReadings += 1 }
                    else if !ownNames[i].contains(r.peer) { unknown += 1 }
                    continue
                }
                guard j != i else { continue }
                counts[j, default: 0] += 1
                windows[j, default: []].insert(min(Int((r.time - start) / w), total - 1))
            }
            for j in devices.indices where j != i {
                let set = windows[j] ?? []
                if counts[j, default: 0] > 0 { detected += 1 }
                achieved += set.count
                startHits += set.filter { $0 < longevityWindows }.count
                endHits += set.filter { $0 >= total - longevityWindows }.count
                pairs.append(PairContinuity(observer: i, observed: j, readings: counts[j, default: 0], windows: set.count,
                                            continuity: Double(set.count) / Double(total)))
            }
        }
        let n = devices.count
        return EfficacyReport(devices: devices, start: start, end: end, windowMilliseconds: w, windowsPerPair: total,
                              pairs: pairs, maxPairs: n * (n - 1), detectedPairs: detected,
                              maxWindows: n * (n - 1) * total, achievedWindows: achieved,
                              longevityWindowsPerPair: longevityWindows, longevityStartWindows: startHits,
                              longevityEndWindows: endHits, unknownPeerReadings: unknown, sharedNames: shared,
                              sharedNameReadings: sharedReadings)
    }
}

extension EfficacyReport {
    static func pct(_ x: Double) -> String { String(format: "%.2f", x) }

    /// One row of totals (the reference `formal-summary.csv` columns, plus continuity itself).
    public var summaryCSV: String {
        let header = "phonescount,maxpairs,achieveddetections,detectionpct,windowsperpair,maxwindows,achievedwindows,continuitypct,deltacewindowspct,longevitywindows,longevitystartwindows,longevityendwindows,longevitystartpct,longevityendpct,longevity,start,end\n"
        let row = [String(devices.count), String(maxPairs), String(detectedPairs), Self.pct(100 * detection),
                   String(windowsPerPair), String(maxWindows), String(achievedWindows), Self.pct(100 * continuity),
                   Self.pct(100 * (1 - continuity)), String(longevityWindowsPerPair), String(longevityStartWindows),
                   String(longevityEndWindows), Self.pct(longevityStartError), Self.pct(longevityEndError), Self.pct(longevity),
                   ContactMatcher.formatLogTime(start), ContactMatcher.formatLogTime(end)]
        return header + row.joined(separator: ",") + "\n"
    }

    /// One row per ordered pair (the reference `formal-continuity.csv`: windows and score per pair).
    public var continuityCSV: String {
        var s = "seenby,shortname,readings,windows,scorepct,deltacewindowspct\n"
        for p in pairs {
            s += "\(heraldCSV(devices[p.observer].label)),\(heraldCSV(devices[p.observed].label)),\(p.readings),\(p.windows),"
            s += "\(Self.pct(100 * p.continuity)),\(Self.pct(100 * (1 - p.continuity)))\n"
        }
        return s
    }

    /// The table for people.
    public var table: String {
        var lines: [String] = []
        lines.append("Test period \(ContactMatcher.formatLogTime(start)) to \(ContactMatcher.formatLogTime(end)): \(windowsPerPair) windows of \(windowMilliseconds / 1000) s per pair")
        lines.append("")
        let labels = devices.map(\.label)
        let wide = max(8, labels.map(\.count).max() ?? 8)
        func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
        func lpad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }
        lines.append(pad("observer", wide) + "  " + pad("observed", wide) + "  " + lpad("readings", 8) + "  " + lpad("windows", 8) + "  " + lpad("continuity", 10))
        for p in pairs {
            lines.append(pad(labels[p.observer], wide) + "  " + pad(labels[p.observed], wide) + "  " + lpad(String(p.readings), 8)
                         + "  " + lpad("\(p.windows)/\(windowsPerPair)", 8) + "  " + lpad(Self.pct(100 * p.continuity) + "%", 10))
        }
        lines.append("")
        lines.append("Detection   \(detectedPairs)/\(maxPairs) pairs = \(Self.pct(100 * detection))%")
        lines.append("Continuity  \(achievedWindows)/\(maxWindows) windows = \(Self.pct(100 * continuity))%")
        lines.append("Longevity   first \(longevityWindowsPerPair) windows missed \(Self.pct(longevityStartError))%, last missed \(Self.pct(longevityEndError))%: |Δ| = \(Self.pct(longevity)) points")
        for s in sharedNames {
            lines.append("warning: short name \(s.name) is claimed by \(s.devices.map { labels[$0] }.joined(separator: " and ")): whose readings are whose cannot be told, so they are left out (give each device its own payload)")
        }
        if sharedNameReadings > 0 { lines.append("(\(sharedNameReadings) readings of short names several devices claim were left out)") }
        if unknownPeerReadings > 0 { lines.append("(\(unknownPeerReadings) readings of short names no analysed device claims were left out)") }
        return lines.joined(separator: "\n") + "\n"
    }
}
