import Foundation
import Testing
@testable import HeraldRuntime

private let header = "time,sensor,id,detect,read,measure,share,visit,detectHerald,delete,data"

/// Three devices, five minutes of test (10 windows of 30 s); the expected numbers are worked out by
/// hand in the comments.
private struct Fixture {
    let root: String
    var dirs: [String] { ["a", "b", "c"].map { root + "/" + $0 } }

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("herald-analyse-\(UUID().uuidString)").path
        func write(_ dir: String, _ detection: String?, _ rows: [String]) throws {
            let d = root + "/" + dir
            try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
            if let detection { try (detection + "\n").write(toFile: d + "/detection.csv", atomically: true, encoding: .utf8) }
            try ([header] + rows + [""]).joined(separator: "\n").write(toFile: d + "/contacts.csv", atomically: true, encoding: .utf8)
        }
        // A sees B through target T1 in windows 0, 0, 1 and (at exactly the end) 9: 4 readings, 3 windows;
        // B's share of C in window 4: 1 reading; T9 is never read, so its measurement is unattributed.
        try write("a", "A,Linux,1,AAAAAA,BBBBBB", [
            "2026-11-21 10:00:00.000+0000,BLE,T1,1,,,,,,,",            // line 2
            "2026-11-21 10:00:01.000+0000,BLE,T1,,2,,,,,,BBBBBB",
            "2026-11-21 10:00:02.000+0000,BLE,T1,,,3,,,,,RSSI:-60.0",
            "2026-11-21 10:00:10.000+0000,BLE,T1,,,3,,,,,RSSI:-61.0",
            "garbage",                                                   // line 6
            "2026-11-21 10:00:31.000+0000,BLE,T1,,,3,,,,,RSSI:-62.0[BLETransmitPower:7.0]",
            "not a time,BLE,T1,,,3,,,,,RSSI:-1.0",                       // line 8
            "2026-11-21 10:01:00.000+0000,BLE,T1,,9,,,,,,x",             // line 9: wrong marker
            "2026-11-21 10:02:00.000+0000,BLE,T1,,,,4,,,,CCCCCC",
            "2026-11-21 10:02:01.000+0000,BLE,T9,,,3,,,,,RSSI:-80.0",
            "2026-11-21 10:05:00.000+0000,BLE,T1,,,3,,,,,RSSI:-63.0",
        ])
        // B sees A in windows 0, 2 and 9 (10:04:35 is 275 s in); never C.
        try write("b", "B,Linux,1,BBBBBB", [
            "2026-11-21 10:00:00.000+0000,BLE,T5,,2,,,,,,AAAAAA",
            "2026-11-21 10:00:05.000+0000,BLE,T5,,,3,,,,,RSSI:-50.0",
            "2026-11-21 10:01:05.000+0000,BLE,T5,,,3,,,,,RSSI:-50.0",
            "2026-11-21 10:04:35.000+0000,BLE,T5,,,3,,,,,RSSI:-50.0",
        ])
        // C sees A once inside the test (the 09:59:30 reading is before it); ZZZZZZ belongs to no device;
        // its own short name shared back is ignored.
        try write("c", "C,Linux,1,CCCCCC", [
            "2026-11-21 09:59:00.000+0000,BLE,T7,,2,,,,,,AAAAAA",
            "2026-11-21 09:59:30.000+0000,BLE,T7,,,3,,,,,RSSI:-70.0",
            "2026-11-21 10:00:29.999+0000,BLE,T7,,,3,,,,,RSSI:-70.0",
            "2026-11-21 10:01:00.000+0000,BLE,T8,,,,4,,,,ZZZZZZ",
            "2026-11-21 10:01:01.000+0000,BLE,T8,,,,4,,,,CCCCCC",
            "2026-11-21 10:06:00.000+0000,BLE,T8,1,,,,,,,",
        ])
    }

    func load() throws -> ([DeviceLog], [MalformedLine]) {
        var logs: [DeviceLog] = [], bad: [MalformedLine] = []
        for d in dirs { let (l, b) = try DeviceLogReader.load(d); logs.append(l); bad += b }
        return (logs, bad)
    }

    func remove() { try? FileManager.default.removeItem(atPath: root) }
}

private func t(_ s: String) -> Int64 { ContactMatcher.parseLogTime(s)! }

@Suite struct AnalyseTests {
    @Test func readsDevicesAndReportsMalformedLines() throws {
        let f = try Fixture()
        defer { f.remove() }
        let (logs, bad) = try f.load()
        #expect(logs.map(\.shortName) == ["AAAAAA", "BBBBBB", "CCCCCC"])
        #expect(logs[0].deviceName == "A" && logs[0].operatingSystem == "Linux")
        #expect(bad.map(\.line) == [6, 8, 9])
        #expect(bad.allSatisfy { $0.file.hasSuffix("a/contacts.csv") })
        #expect(bad[0].reason == "expected 11 columns, found 1")
        #expect(bad[2].reason.contains("column 5"))
        #expect(logs[0].unattributedMeasurements == 1)
        // A: four measurements of T1 and one share (the read itself is not a reading).
        #expect(logs[0].readings.map(\.peer) == ["BBBBBB", "BBBBBB", "BBBBBB", "CCCCCC", "BBBBBB"])
        #expect(logs[0].firstTime == t("2026-11-21 10:00:00.000+0000"))
        #expect(logs[0].lastTime == t("2026-11-21 10:05:00.000+0000"))
    }

    @Test func metricsOnAFixedPeriod() throws {
        let f = try Fixture()
        defer { f.remove() }
        let (logs, _) = try f.load()
        let r = try EfficacyAnalysis.analyse(logs, options: .init(start: t("2026-11-21 10:00:00+0000"), end: t("2026-11-21 10:05:00+0000"),
                                                                   longevityMilliseconds: 60_000))
        #expect(r.windowsPerPair == 10)
        let cells = r.pairs.map { "\($0.observer)>\($0.observed):\($0.readings)/\($0.windows)" }
        #expect(cells == ["0>1:4/3", "0>2:1/1", "1>0:3/3", "1>2:0/0", "2>0:1/1", "2>1:0/0"])
        // Detection: 4 of the 6 ordered pairs.
        #expect(r.maxPairs == 6 && r.detectedPairs == 4)
        #expect(abs(r.detection - 4.0 / 6.0) < 1e-12)
        // Continuity: 3 + 1 + 3 + 1 = 8 of 6 × 10 windows.
        #expect(r.achievedWindows == 8 && r.maxWindows == 60)
        #expect(abs(r.continuity - 8.0 / 60.0) < 1e-12)
        // Longevity with 1-minute periods (2 windows): first {A>B 0,1; B>A 0; C>A 0} = 4 of 12,
        // last {A>B 9; B>A 9} = 2 of 12: |66.67 − 83.33| = 16.67 points.
        #expect(r.longevityWindowsPerPair == 2 && r.longevityStartWindows == 4 && r.longevityEndWindows == 2)
        #expect(abs(r.longevity - 100.0 / 6.0) < 1e-9)
        #expect(r.unknownPeerReadings == 1)
        #expect(r.summaryCSV.split(separator: "\n")[1].hasPrefix("3,6,4,66.67,10,60,8,13.33,86.67,2,4,2,66.67,83.33,16.67,2026-11-21 10:00:00.000+0000,"))
        let pairLines = r.continuityCSV.split(separator: "\n")
        #expect(pairLines.count == 7)
        #expect(pairLines[1] == "A [AAAAAA],B [BBBBBB],4,3,30.00,70.00")
        #expect(r.table.contains("Detection   4/6 pairs = 66.67%"))
    }

    @Test func defaultPeriodIsWhenAllDevicesWereLogging() throws {
        let f = try Fixture()
        defer { f.remove() }
        let (logs, _) = try f.load()
        let r = try EfficacyAnalysis.analyse(logs)
        // Latest first row (A and B at 10:00:00), earliest last row (B at 10:04:35): 275 s, 9 windows, the
        // last one 35 s long (the 5 s remainder is under half a window).
        #expect(r.start == t("2026-11-21 10:00:00+0000"))
        #expect(r.end == t("2026-11-21 10:04:35+0000"))
        #expect(r.windowsPerPair == 9)
        // A's reading at 10:05:00 is now outside: A>B keeps windows 0 and 1.
        #expect(r.pairs[0].windows == 2 && r.pairs[0].readings == 3)
        // B's reading exactly at the end still counts, in the last window.
        #expect(r.pairs[2].windows == 3)
        // An hour-long longevity period is cut to the whole test.
        #expect(r.longevityWindowsPerPair == 9 && r.longevity == 0)
    }

    /// A test period a few milliseconds past a whole number of windows does not make a window of those
    /// milliseconds that every pair must fill (the rotation test's 27 ms ninth window, 2026-12-01); half a
    /// window or more past it does.
    @Test func noWindowIsShorterThanHalfAWindow() throws {
        let f = try Fixture()
        defer { f.remove() }
        let (logs, _) = try f.load()
        let start = t("2026-11-21 10:00:00+0000")
        func report(endingAt end: String) throws -> EfficacyReport {
            try EfficacyAnalysis.analyse(logs, options: .init(start: start, end: t(end)))
        }
        let sliver = try report(endingAt: "2026-11-21 10:05:00.027+0000")
        #expect(sliver.windowsPerPair == 10)
        // A's reading at 10:05:00 falls in the last window, 30.027 s long: A>B keeps windows 0, 1 and 9, all
        // it can have, as over exactly five minutes.
        #expect(sliver.pairs[0].windows == 3 && sliver.continuity == 8.0 / 60.0)
        #expect(try report(endingAt: "2026-11-21 10:05:14.999+0000").windowsPerPair == 10)
        #expect(try report(endingAt: "2026-11-21 10:05:15+0000").windowsPerPair == 11)
        // A test shorter than half a window is still one window.
        #expect(try report(endingAt: "2026-11-21 10:00:01+0000").windowsPerPair == 1)
    }

    @Test func refusesWhatCannotBeAnalysed() throws {
        let f = try Fixture()
        defer { f.remove() }
        let (logs, _) = try f.load()
        #expect(throws: AnalysisError.self) { try EfficacyAnalysis.analyse([logs[0]]) }
        #expect(throws: AnalysisError.self) {
            try EfficacyAnalysis.analyse(logs, options: .init(start: t("2026-11-21 10:05:00+0000"), end: t("2026-11-21 10:00:00+0000")))
        }
        #expect(throws: AnalysisError.self) { try DeviceLogReader.load(f.root + "/nowhere") }
        // No detection.csv: the device is read, reported, and cannot be observed.
        try FileManager.default.removeItem(atPath: f.root + "/b/detection.csv")
        let (b, bad) = try DeviceLogReader.load(f.root + "/b")
        #expect(b.shortName == nil)
        #expect(bad.count == 1 && bad[0].file.hasSuffix("b/detection.csv"))
    }

    /// Older Herald app logs: nine columns (no detectHerald/delete) and local times without a zone.
    @Test func readsTheOlderNineColumnLayout() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("herald-old-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try "iPhone,iOS,14.2,OLDOLD\n".write(toFile: dir + "/detection.csv", atomically: true, encoding: .utf8)
        try """
            time,sensor,id,detect,read,measure,share,visit,data
            2020-09-27 01:42:00,BLE,T1,,2,,,,PEERAB
            2020-09-27 01:42:01,BLE,T1,,,3,,,RSSI:-66.0
            2020-09-27 01:42:02.500,BLE,T1,,,,4,,OTHERX
            2020-09-27 01:42:03,BLE,T1,,,3,,,,
            2020-09-27 01:42:04,BLE,T1,,,,,,

            """.write(toFile: dir + "/contacts.csv", atomically: true, encoding: .utf8)
        let (log, bad) = try DeviceLogReader.load(dir)
        #expect(log.shortName == "OLDOLD")
        #expect(log.readings == [.init(time: t("2020-09-27 01:42:01+0000"), peer: "PEERAB"),
                                 .init(time: t("2020-09-27 01:42:02.500+0000"), peer: "OTHERX")])
        #expect(bad.map(\.line) == [5, 6])
        #expect(bad[0].reason == "expected 9 columns, found 10")
        #expect(bad[1].reason == "no event marker")
    }

    @Test func csvFieldsKeepQuotedCommas() {
        #expect(DeviceLogReader.csvFields("a,\"b,c\",,d") == ["a", "b,c", "", "d"])
        #expect(DeviceLogReader.csvFields("x,") == ["x", ""])
        #expect(DeviceLogReader.csvFields("") == [""])
        #expect(DeviceLogReader.csvFields("\"open,never closed") == ["open,never closed"])
        // Lines the logger writes read back to the same columns.
        let row = ContactLog.lines(for: .detect("a,b", at: Date(timeIntervalSince1970: 0)))[0]
        #expect(DeviceLogReader.csvFields(Substring(row)).count == 11)
    }

    /// Random bytes and truncations never trap the reader: it reads the file or refuses it in words.
    @Test func garbageNeverCrashes() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("herald-garbage-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var rng = SystemRandomNumberGenerator()
        let sample = Array((header + "\n2026-11-21 10:00:00.000+0000,BLE,\"T,1\",,2,,,,,,AB\n").utf8)
        var refused = 0
        for round in 0..<50 {
            var bytes = Array(sample.prefix(Int.random(in: 0...sample.count, using: &rng)))
            for _ in 0..<(round % 5) { if !bytes.isEmpty { bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) } }
            _ = FileManager.default.createFile(atPath: dir + "/contacts.csv", contents: Data(bytes))
            _ = FileManager.default.createFile(atPath: dir + "/detection.csv", contents: Data(bytes.reversed()))
            // A file with no usable line is refused (MalformedFile), in words; nothing traps.
            do { _ = try DeviceLogReader.load(dir) } catch {
                refused += 1
                #expect(error.description.contains(": not a Herald "), "\(error)")
            }
        }
        // Not only no trap: garbage is refused. Which rounds are depends on the random cut (a blank
        // file is an empty log, a reversed header can read as a detection line), so not all 50.
        #expect(refused > 0)
    }
}


/// A wearable's Simple payload changes every 360 s: the readings of its later payloads count for it,
/// known from its log.txt `own payload NAME` lines.
@Suite struct AnalyseRotatingPayloadTests {
    @Test func laterPayloadsFromTheTextLogCountForTheDevice() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("herald-rotate-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        func write(_ dir: String, _ detection: String, _ rows: [String], log: [String]) throws {
            let d = root + "/" + dir
            try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
            try (detection + "\n").write(toFile: d + "/detection.csv", atomically: true, encoding: .utf8)
            try ([header] + rows + [""]).joined(separator: "\n").write(toFile: d + "/contacts.csv", atomically: true, encoding: .utf8)
            try (log.joined(separator: "\n") + "\n").write(toFile: d + "/log.txt", atomically: true, encoding: .utf8)
        }
        // B served BBBBBB, then B2B2B2 from 10:00:30 (a new address, so A tracks it as a new target T2).
        try write("a", "A,Linux,1,AAAAAA", [
            "2026-11-21 10:00:00.000+0000,BLE,T1,,2,,,,,,BBBBBB",
            "2026-11-21 10:00:05.000+0000,BLE,T1,,,3,,,,,RSSI:-60.0",
            "2026-11-21 10:00:31.000+0000,BLE,T2,,2,,,,,,B2B2B2",
            "2026-11-21 10:00:35.000+0000,BLE,T2,,,3,,,,,RSSI:-60.0",
            "2026-11-21 10:00:59.000+0000,BLE,T2,,,3,,,,,RSSI:-60.0",
        ], log: ["2026-11-21 10:00:00.000+0000,info,Sensor,Wearable,started; own payload AAAAAA"])
        try write("b", "B,Linux,1,BBBBBB", [
            "2026-11-21 10:00:00.000+0000,BLE,T7,,2,,,,,,AAAAAA",
            "2026-11-21 10:00:05.000+0000,BLE,T7,,,3,,,,,RSSI:-50.0",
            "2026-11-21 10:00:45.000+0000,BLE,T7,,,3,,,,,RSSI:-50.0",
            "2026-11-21 10:00:59.000+0000,BLE,T7,,,3,,,,,RSSI:-50.0",
        ], log: ["2026-11-21 10:00:00.000+0000,info,Sensor,Wearable,started; own payload BBBBBB",
                 "2026-11-21 10:00:30.000+0000,info,Sensor,Wearable,own payload B2B2B2 from now on"])
        let b = try DeviceLogReader.load(root + "/b").log
        #expect(b.shortNames == ["BBBBBB", "B2B2B2"])
        let a = try DeviceLogReader.load(root + "/a").log
        let report = try EfficacyAnalysis.analyse([a, b], options: EfficacyOptions(windowMilliseconds: 30_000))
        // Two 30 s windows each way; A heard B (as BBBBBB, then B2B2B2) in both.
        #expect(report.table.contains("Continuity  4/4 windows = 100.00%"), "\(report.table)")
    }
}
