import Foundation

/// `herald check`'s three renderings of the verdicts: a line per rule for people, one JSON object
/// per rule, and a self-contained HTML page (with the scan summary and RSSI plot of `ScanReportHTML`).
public enum CheckReport {
    /// `PASS ADV-1  statement — evidence`, one line per rule, then a tally.
    public static func text(_ verdicts: [CheckVerdict], device: String) -> String {
        var out = "herald check \(device)\n"
        let width = verdicts.map(\.rule.count).max() ?? 6
        for v in verdicts {
            out += "\(v.status.word.padding(toLength: 4, withPad: " ", startingAt: 0)) \(v.rule.padding(toLength: width, withPad: " ", startingAt: 0))  \(v.statement) — \(v.evidence)\n"
        }
        out += tally(verdicts) + "\n"
        return out
    }

    public static func tally(_ verdicts: [CheckVerdict]) -> String {
        let n = { (s: CheckStatus) in verdicts.filter { $0.status == s }.count }
        return "\(n(.pass)) pass, \(n(.warn)) warn, \(n(.fail)) fail, \(n(.skip)) skip"
    }

    /// One JSON object per line and rule: `rule`, `status`, `statement`, `source`, `evidence`.
    public static func jsonLines(_ verdicts: [CheckVerdict], device: String) -> String {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        struct Line: Encodable { var device: String; var rule, status, statement, source, evidence: String }
        return verdicts.compactMap { v in
            (try? e.encode(Line(device: device, rule: v.rule, status: v.status.rawValue, statement: v.statement,
                                source: v.source, evidence: v.evidence))).map { String(decoding: $0, as: UTF8.self) }
        }.joined(separator: "\n") + "\n"
    }

    public static func html(_ verdicts: [CheckVerdict], device: String, title: String, summary: ScanSummary?,
                            durationSeconds: Double, generated: Date = Date()) -> String {
        let esc = ScanReportHTML.escape
        var h = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(esc(title))</title>
            <style>
            body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
            table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}
            .pass{background:#e6f6ea}.warn{background:#fff4d6}.fail{background:#fde2e2}.skip{color:#777}
            td.s{font-weight:bold}small{color:#555}
            </style></head><body>
            <h1>\(esc(title))</h1>
            <p>Device under test: <b>\(esc(device))</b>. \(esc(tally(verdicts))); generated \(esc(logTimestamp(generated))).</p>
            <table><tr><th>status</th><th>rule</th><th>statement and source</th><th>evidence</th></tr>

            """
        for v in verdicts {
            h += "<tr class=\"\(v.status.rawValue)\"><td class=\"s\">\(v.status.word)</td><td>\(esc(v.rule))</td>"
            h += "<td>\(esc(v.statement))<br><small>\(esc(v.source))</small></td><td>\(esc(v.evidence))</td></tr>\n"
        }
        h += "</table>\n"
        if let summary {
            // The advertisers heard while observing, with the RSSI plots, as `herald scan --report` draws them.
            let scan = ScanReportHTML.render(summary, title: "Advertisers heard", durationSeconds: durationSeconds, generated: generated)
            if let start = scan.range(of: "<body>"), let end = scan.range(of: "</body>") {
                h += "<h2>Adverts observed</h2>\n" + scan[start.upperBound..<end.lowerBound].replacingOccurrences(of: "<h1>Advertisers heard</h1>", with: "")
            }
        }
        h += "</body></html>\n"
        return h
    }
}
