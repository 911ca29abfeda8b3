import Foundation

/// A self-contained HTML page for a bench scan: the summary table and, per device, an inline SVG
/// plot of RSSI over time. No scripts, fonts or images are fetched, so the file can be mailed or
/// opened offline.
public enum ScanReportHTML {
    public static func escape(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    public static func render(_ summary: ScanSummary, title: String, durationSeconds: Double, generated: Date = Date()) -> String {
        let series = summary.rssiSeries
        var h = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(escape(title))</title>
            <style>
            body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
            table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
            td.l,th.l{text-align:left}h2{font-size:15px;margin:1.5em 0 .3em}svg{background:#fafafa;border:1px solid #ddd}
            .herald{color:#0a6}.apple{color:#06c}
            </style></head><body>
            <h1>\(escape(title))</h1>
            <p>\(series.count) device(s), \(summary.reports) report(s) in \(String(format: "%.1f", durationSeconds)) s; generated \(escape(logTimestamp(generated))).\(summary.evictionNote.map { " " + escape($0) + "." } ?? "")\(summary.hasPayloads ? " Payload codes decoded with --byte-order \(summary.byteOrder.optionName) (\(escape(summary.byteOrder.explanation)))." : "")</p>
            <table><tr><th class="l">kind</th><th class="l">address</th><th class="l">pseudo address</th><th>adverts</th><th>scan rsp</th>
            <th>interval mean ms</th><th>interval min ms</th><th>interval max ms</th><th>RSSI n</th><th>RSSI mean dBm</th><th>RSSI sd</th><th>RSSI min dBm</th><th>RSSI max dBm</th><th>Tx power dBm</th><th class="l">payload</th><th class="l">name</th></tr>

            """
        func f(_ v: Double?, _ d: Int = 0) -> String { v.map { String(format: "%.\(d)f", $0) } ?? "" }
        for (i, (d, _)) in series.enumerated() {
            let cls: String
            switch d.kind {
            case .heraldWearable, .venueBeacon, .herald, .android, .ios: cls = "herald"
            case .appleOther: cls = "apple"
            case .other: cls = ""
            }
            h += "<tr><td class=\"l \(cls)\">\(escape(d.kind.description))</td><td class=\"l\"><a href=\"#d\(i)\">\(escape(d.address))</a> (\(escape(d.addressType)))</td>"
            h += "<td class=\"l\">\(escape(d.pseudoAddress ?? ""))</td><td>\(d.adverts)</td><td>\(d.scanResponses)</td>"
            h += "<td>\(f(d.interval?.mean))</td><td>\(f(d.interval?.min))</td><td>\(f(d.interval?.max))</td>"
            h += "<td>\(d.rssi?.count ?? 0)</td><td>\(f(d.rssi?.mean, 1))</td><td>\(f(d.rssi?.sd ?? nil, 1))</td><td>\(f(d.rssi?.min))</td><td>\(f(d.rssi?.max))</td>"
            let payload = d.payloadText ?? (d.payloadError.map { "read failed: \($0)" } ?? "")
            h += "<td>\((d.txPower ?? d.reportTxPower).map(String.init) ?? "")</td><td class=\"l\">\(escape(payload))</td>"
            h += "<td class=\"l\">\(escape(d.name ?? ""))</td></tr>\n"
        }
        h += "</table>\n"
        for (i, (d, points)) in series.enumerated() {
            h += "<h2 id=\"d\(i)\">\(escape(d.address)) \(escape(d.name.map { "“\($0)”" } ?? "")) — RSSI over time</h2>\n"
            h += plot(points, duration: max(durationSeconds, points.last?.0 ?? 0))
        }
        h += "</body></html>\n"
        return h
    }

    /// RSSI (dBm, y) against seconds (x): points, axes, and grid lines every 10 dB.
    static func plot(_ points: [(Double, Int)], duration: Double) -> String {
        let w = 720.0, hgt = 220.0, left = 44.0, right = 10.0, top = 10.0, bottom = 26.0
        let pw = w - left - right, ph = hgt - top - bottom
        let values = points.map(\.1)
        // A range rounded out to 10 dB that always shows at least 30 dB.
        var lo = Double(((values.min() ?? -90) - 5) / 10 * 10), hi = Double(((values.max() ?? -40) + 14) / 10 * 10)
        if hi - lo < 30 { lo = hi - 30 }
        if lo >= hi { hi = lo + 10 }
        let span = max(duration, 1)
        func x(_ t: Double) -> Double { left + pw * min(max(t / span, 0), 1) }
        func y(_ v: Double) -> Double { top + ph * (hi - min(max(v, lo), hi)) / (hi - lo) }
        func n(_ v: Double) -> String { String(format: "%.1f", v) }
        var s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(w))\" height=\"\(Int(hgt))\" viewBox=\"0 0 \(Int(w)) \(Int(hgt))\" role=\"img\">\n"
        var level = lo
        while level <= hi {
            s += "<line x1=\"\(n(left))\" y1=\"\(n(y(level)))\" x2=\"\(n(w - right))\" y2=\"\(n(y(level)))\" stroke=\"#e3e3e3\"/>"
            s += "<text x=\"\(n(left - 4))\" y=\"\(n(y(level) + 4))\" font-size=\"10\" text-anchor=\"end\">\(Int(level))</text>\n"
            level += 10
        }
        for k in 0...4 {
            let t = span * Double(k) / 4
            s += "<text x=\"\(n(x(t)))\" y=\"\(n(hgt - 8))\" font-size=\"10\" text-anchor=\"middle\">\(String(format: "%.0f", t)) s</text>"
        }
        s += "\n<line x1=\"\(n(left))\" y1=\"\(n(top))\" x2=\"\(n(left))\" y2=\"\(n(top + ph))\" stroke=\"#888\"/>"
        s += "<line x1=\"\(n(left))\" y1=\"\(n(top + ph))\" x2=\"\(n(w - right))\" y2=\"\(n(top + ph))\" stroke=\"#888\"/>\n"
        if points.count > 1 {
            s += "<polyline fill=\"none\" stroke=\"#9ab\" stroke-width=\"1\" points=\""
            s += points.map { "\(n(x($0.0))),\(n(y(Double($0.1))))" }.joined(separator: " ")
            s += "\"/>\n"
        }
        for p in points {
            s += "<circle cx=\"\(n(x(p.0)))\" cy=\"\(n(y(Double(p.1))))\" r=\"2\" fill=\"#258\"><title>\(String(format: "%.3f", p.0)) s: \(p.1) dBm</title></circle>"
        }
        s += "\n</svg>\n"
        return s
    }
}
