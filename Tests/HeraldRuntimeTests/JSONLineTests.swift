import Foundation
import Testing
@testable import HeraldRuntime

/// `JSONLine` and `iso8601Timestamp` replace `JSONSerialization` and `ISO8601DateFormatter` on the event
/// streams: they must write what those wrote, byte for byte, for every value an event holds.
@Suite struct JSONLineTests {
    static func foundation(_ object: [String: Any], slashes: Bool = true) -> String {
        var options: JSONSerialization.WritingOptions = [.sortedKeys]
        if !slashes { options.insert(.withoutEscapingSlashes) }
        return String(decoding: try! JSONSerialization.data(withJSONObject: object, options: options), as: UTF8.self)
    }

    static var events: [[String: Any]] { [
        ["event": "didMeasure", "rssi": -66, "txPower": 7, "target": "T3", "time": "2026-11-29T17:30:10.123Z"],
        ["event": "didRead", "payload": "10033a0001ab", "decoded": "test 826/0 client 1234567890",
         "shortName": "AAGrq6", "kind": "herald-wearable", "target": "T1"],
        ["event": "didShare", "payloads": ["ab", "cd"], "target": "T2"],
        ["event": "didShare", "payloads": [String](), "target": "T2"],
        ["event": "connected", "handle": 64, "peer": "C0:11:22:33:44:55", "role": "central"],
        ["event": "venue", "decoded": "venue 826/4 location 123123 \"Erin's Stakehouse\"", "ok": true, "no": false],
        ["nested": ["b": 1, "a": ["x", "y"]] as [String: Any], "list": [1, 2, 3], "empty": [String: Any]()],
        ["text": "tab\tline\nreturn\rback\\slash/quote\" bell\u{07} bs\u{08} ff\u{0C} nul\u{00} é 🙂"],
    ] }

    @Test func writesWhatJSONSerializationWrites() {
        for object in Self.events {
            #expect(JSONLine.encode(object) == Self.foundation(object))
            #expect(JSONLine.encode(object, escapingSlashes: false) == Self.foundation(object, slashes: false))
        }
    }

    @Test func controlCharactersRoundTrip() throws {
        var s = ""
        for v in 0..<0x20 { s.unicodeScalars.append(Unicode.Scalar(UInt8(v))) }
        let line = try #require(JSONLine.encode(["s": s]))
        let back = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(back?["s"] as? String == s)
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 })
    }

    @Test func otherValuesFallBackToJSONSerialization() throws {
        let object: [String: Any] = ["d": 1.5, "u": UInt8(7), "s": "x"]
        #expect(JSONLine.encode(object) == Self.foundation(object))
        // Not JSON at all: no line rather than a wrong one.
        #expect(JSONLine.encode(["date": Date()]) == nil)
    }

    @Test func timestampsAreISO8601DateFormattersInUTC() {
        let utc = TimeZone(identifier: "UTC")!
        var rng = SystemRandomNumberGenerator()
        var dates = [0, -1, 0.0005, 951_782_400, 1_709_251_199.9996, 1_795_255_200.123, 4_102_444_800].map {
            Date(timeIntervalSince1970: $0)
        }
        for _ in 0..<500 { dates.append(Date(timeIntervalSince1970: Double.random(in: -2e9...4e9, using: &rng))) }
        for d in dates {
            // At whole milliseconds. Below that the formatter rounds (…59.9996 becomes the next second)
            // where `iso8601Timestamp` truncates, as `logTimestamp` does for the Herald logs, so an
            // event's time and its log row's are the same millisecond.
            let ms = Date(timeIntervalSince1970: (d.timeIntervalSince1970 * 1000).rounded(.down) / 1000 + 0.0001)
            #expect(iso8601Timestamp(ms, fractionalSeconds: false) == ISO8601DateFormatter().string(from: ms))
            #expect(iso8601Timestamp(ms, fractionalSeconds: true)
                == ISO8601DateFormatter.string(from: ms, timeZone: utc, formatOptions: [.withInternetDateTime, .withFractionalSeconds]))
        }
        let leap = Date(timeIntervalSince1970: 1_709_251_199.9996)
        #expect(iso8601Timestamp(leap, fractionalSeconds: true) == "2024-02-29T23:59:59.999Z")
        #expect(logTimestamp(leap) == "2024-02-29 23:59:59.999+0000")
    }
}
