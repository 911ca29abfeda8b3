import Foundation

/// One JSON object on one line, keys sorted: the `--json-events` lines of `herald wearable`, `herald
/// peripheral` and the sensor printers.
///
/// Written by hand, not with `JSONSerialization`. In a crowd a wearable emits an event for every advert it
/// measures (about 26 a second with seven peers), and `JSONSerialization` with its dynamic casts, sorting
/// and `Data` was 17 % of the wearable's CPU (perf, `docs/crowd-issue-39.md`). The output is what
/// `JSONSerialization.data(withJSONObject:options: [.sortedKeys])` writes for the values events hold
/// (strings, `Int`s, `Bool`s, arrays and objects of them), slashes escaped as `\/` unless
/// `escapingSlashes` is false. Any other value (a `Double`, an `NSNumber`) hands the whole object to
/// `JSONSerialization`, so a line is always JSON.
public enum JSONLine {
    public static func encode(_ object: [String: Any], escapingSlashes: Bool = true) -> String? {
        var out = ""
        out.reserveCapacity(160)
        if append(object, to: &out, escapingSlashes: escapingSlashes) { return out }
        var options: JSONSerialization.WritingOptions = [.sortedKeys]
        if !escapingSlashes { options.insert(.withoutEscapingSlashes) }
        guard JSONSerialization.isValidJSONObject(object),
              let data = try? JSONSerialization.data(withJSONObject: object, options: options) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Appends `value`; false when it holds a value this encoder leaves to `JSONSerialization`.
    static func append(_ value: Any, to out: inout String, escapingSlashes: Bool) -> Bool {
        switch value {
        case let s as String:
            appendString(s, to: &out, escapingSlashes: escapingSlashes)
        case let i as Int:
            out += String(i)
        case let b as Bool:
            out += b ? "true" : "false"
        case let a as [String]:
            out += "["
            for (n, s) in a.enumerated() {
                if n > 0 { out += "," }
                appendString(s, to: &out, escapingSlashes: escapingSlashes)
            }
            out += "]"
        case let a as [Any]:
            out += "["
            for (n, v) in a.enumerated() {
                if n > 0 { out += "," }
                guard append(v, to: &out, escapingSlashes: escapingSlashes) else { return false }
            }
            out += "]"
        case let o as [String: Any]:
            out += "{"
            // Sorted as `.sortedKeys` sorts: by the keys' own order.
            for (n, key) in o.keys.sorted().enumerated() {
                if n > 0 { out += "," }
                appendString(key, to: &out, escapingSlashes: escapingSlashes)
                out += ":"
                guard append(o[key]!, to: &out, escapingSlashes: escapingSlashes) else { return false }
            }
            out += "}"
        default:
            return false
        }
        return true
    }

    /// RFC 8259 section 7: the quotation mark, the reverse solidus and U+0000–U+001F must be escaped;
    /// the solidus may be, and `JSONSerialization` does unless told not to.
    static func appendString(_ s: String, to out: inout String, escapingSlashes: Bool) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "/": out += escapingSlashes ? "\\/" : "/"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case let c where c.value < 0x20:
                let hex = String(c.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
