import Testing
import Foundation
import Herald
@testable import HeraldRuntime

@Suite struct MatchTests {
    static let zero = [UInt8](repeating: 0, count: 2048)

    /// Contact identifier (hex) of `day`/`period` for the all-zero secret key.
    func identifier(day: Int, period: Int) throws -> String {
        let r = try KeyTools.derive(secretKey: Self.zero, day: day, period: period,
                                    header: .init(protocolAndVersion: 0x10, countryCode: 826, stateCode: 1), order: .bigEndian)
        return r.payload
    }

    @Test func logTimeFormat() {
        #expect(ContactMatcher.parseLogTime("2026-11-21 10:00:00.123+0000") == 1_795_255_200_123)
        #expect(ContactMatcher.parseLogTime("2026-11-21 11:00:00.123+0100") == 1_795_255_200_123)
        #expect(ContactMatcher.parseLogTime("2026-11-21 10:00:00+0000") == 1_795_255_200_000)
        #expect(ContactMatcher.parseLogTime("2026-11-21T10:00:00.5Z") == 1_795_255_200_500)
        #expect(ContactMatcher.parseLogTime("2026-11-21 10:00:00.123") == nil)
        #expect(ContactMatcher.parseLogTime("2026-13-21 10:00:00.123+0000") == nil)
        #expect(ContactMatcher.parseLogTime("garbage") == nil)
        #expect(ContactMatcher.formatLogTime(1_795_255_200_123) == "2026-11-21 10:00:00.123+0000")
    }

    @Test func matchesPayloadsWithRSSIAndReportsMalformedLines() throws {
        let dir = try temporaryDirectory()
        let logs = dir.appendingPathComponent("phone1")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        // Matching keys for days 3 and 4 of the zero key (reference epoch), as `keys export` writes them.
        let (csv, _) = try KeyTools.exportMatchingKeys(secretKey: Self.zero, epoch: .reference,
                                                       from: KeyTools.parseTime("2020-09-27"), to: KeyTools.parseTime("2020-09-28"))
        let keysPath = dir.appendingPathComponent("keys.csv").path
        try (csv + "5,2020-09-29,notbase64\n").write(toFile: keysPath, atomically: true, encoding: .utf8)
        let (keys, badKeys) = try MatchingKeysFile.load(keysPath)
        #expect(keys.count == 2 && keys[0].day == 3 && keys[1].day == 4)
        #expect(badKeys == [MalformedLine(file: keysPath, line: 4, reason: "matching key is not 32 bytes of Base64")])

        let p17 = try identifier(day: 3, period: 17), p18 = try identifier(day: 3, period: 18)
        let other = "10033a0001" + String(repeating: "ab", count: 16)
        let payloads = """
        time,target,payload
        2020-09-27 01:42:10.000+0000,T1,\(p17)
        2020-09-27 01:44:00.500+0000,T1,\(p17)
        2020-09-27 01:48:30.250+0000,T2,\(p18)
        2020-09-27 01:49:00.000+0000,T3,\(other)
        2020-09-27 01:50:00.000+0000,T4,30033a0001
        not a time,T1,\(p17)
        2020-09-27 01:51:00.000+0000,T1,zz
        2020-09-27 01:52:00.000+0000,T1
        2020-09-27 01:53:00.000+0000,T1,10033a00

        """
        try payloads.write(to: logs.appendingPathComponent("payloads.csv"), atomically: true, encoding: .utf8)
        let contacts = """
        time,sensor,id,detect,read,measure,share,visit,detectHerald,delete,data
        2020-09-27 01:42:00.000+0000,BLE,T1,,,3,,,,,RSSI:-66.0
        2020-09-27 01:42:05.000+0000,BLE,T1,,2,,,,,,
        2020-09-27 01:43:00.000+0000,BLE,T1,,,3,,,,,RSSI:-60.0
        2020-09-27 01:48:00.000+0000,BLE,T2,,,3,,,,,RSSI:-71.5,TX:8
        2020-09-27 01:49:00.000+0000,BLE,T3,,,3,,,,,RSSI:-40.0
        2020-09-27 01:50:00.000+0000,BLE,T2,,,3,,,,,Tx only
        2020-09-27 01:50:00.000+0000,BLE,T2

        """
        try contacts.write(to: logs.appendingPathComponent("contacts.csv"), atomically: true, encoding: .utf8)

        let index = ContactIdentifierIndex(keys: keys)
        #expect(index.derived == 2 * 241)
        let (matches, malformed, rows) = try ContactMatcher.match(index: index, keys: keys, logDirectories: [logs.path])
        #expect(rows == 6) // parseable rows, matched or not
        #expect(matches.count == 1)
        let m = try #require(matches.first)
        #expect(m.day == 3 && m.keyIndex == 0 && m.matchingKey == keys[0].base64)
        #expect(m.count == 3 && m.contactIdentifiers == 2)
        #expect(m.firstSeen == ContactMatcher.parseLogTime("2020-09-27 01:42:10.000+0000"))
        #expect(m.durationSeconds == 380.25)
        // RSSI of T1 (-66, -60) and T2 (-71.5): T3 did not match.
        #expect(m.rssiCount == 3)
        #expect(m.rssiMax == -60)
        #expect(abs((m.rssiMean ?? 0) - (-197.5 / 3)) < 1e-9)
        let payloadsPath = logs.appendingPathComponent("payloads.csv").path
        let contactsPath = logs.appendingPathComponent("contacts.csv").path
        #expect(malformed.map { "\($0.file):\($0.line)" } == [
            "\(payloadsPath):7", "\(payloadsPath):8", "\(payloadsPath):9", "\(payloadsPath):10",
            "\(contactsPath):7", "\(contactsPath):8",
        ])
        #expect(malformed[0].reason == "bad time \"not a time\"")
        #expect(malformed[1].reason == "payload is not hex")
        #expect(malformed[3].reason.hasPrefix("Simple payload does not parse"))
        let report = ContactMatcher.csv(matches)
        #expect(report.contains(",3,\(keys[0].base64),2,2020-09-27 01:42:10.000+0000,2020-09-27 01:48:30.250+0000,380.250,3,3,-65.8,-60.0"))
    }

    @Test func aLogDirectoryWithACommaOrQuoteIsOneCSVField() {
        #expect(ContactMatcher.csvField("/logs/a") == "/logs/a")
        #expect(ContactMatcher.csvField("/logs/a,b") == "\"/logs/a,b\"")
        #expect(ContactMatcher.csvField("/logs/\"x\"") == "\"/logs/\"\"x\"\"\"")
        #expect(DeviceLogReader.csvFields(Substring(ContactMatcher.csvField("/logs/a,b") + ",2")) == ["/logs/a,b", "2"])
    }

    @Test func missingPayloadsFileIsAnError() throws {
        let dir = try temporaryDirectory()
        let index = ContactIdentifierIndex(keys: [])
        #expect(throws: KeyToolError.self) { try ContactMatcher.match(index: index, keys: [], logDirectories: [dir.path]) }
    }
}
