import Foundation
import Testing
@testable import HeraldRuntime

/// 2026-11-21 10:00:00.123 UTC.
private let t0 = Date(timeIntervalSince1970: 1_795_255_200.123)
private let stamp = "2026-11-21 10:00:00.123+0000"
/// A Simple payload: header 10 03 3a, then 00 01 and sixteen 0xab.
private let simple: [UInt8] = [0x10, 0x03, 0x3a, 0x00, 0x01] + Array(repeating: 0xab, count: 16)

@Suite struct LogFormatTests {
    @Test func shortNames() {
        #expect(payloadShortName([]) == "")
        #expect(payloadShortName([0x01]) == "AQ==")
        #expect(payloadShortName([0x01, 0x02, 0x03]) == "AQID")
        // Four bytes: only the fourth is encoded, and its Base64 is shorter than six characters.
        #expect(payloadShortName([0x01, 0x02, 0x03, 0xFF]) == "/w==")
        // Header skipped, first six characters of the rest.
        #expect(payloadShortName(simple) == "AAGrq6")
    }

    @Test func timestamps() {
        #expect(logTimestamp(t0) == stamp)
        #expect(logTimestamp(Date(timeIntervalSince1970: 0)) == "1970-01-01 00:00:00.000+0000")
        #expect(logTimestamp(Date(timeIntervalSince1970: -1)) == "1969-12-31 23:59:59.000+0000")
        // Leap day, and milliseconds truncate rather than round (as java.util.Date does).
        #expect(logTimestamp(Date(timeIntervalSince1970: 1_709_251_199.9996)) == "2024-02-29 23:59:59.999+0000")
        // The format round-trips through the parser `herald match` uses.
        #expect(ContactMatcher.parseLogTime(logTimestamp(t0)) == 1_795_255_200_123)
    }

    @Test func contactRowsAreByteExact() {
        #expect(ContactLog.header == "time,sensor,id,detect,read,measure,share,visit,detectHerald,delete,data")
        #expect(ContactLog.lines(for: .detect("T1", at: t0)) == ["\(stamp),BLE,T1,1,,,,,,,"])
        #expect(ContactLog.lines(for: .read(simple, from: "T1", at: t0)) == ["\(stamp),BLE,T1,,2,,,,,,AAGrq6"])
        #expect(ContactLog.lines(for: .measure(rssi: -66, from: "T1", at: t0)) == ["\(stamp),BLE,T1,,,3,,,,,RSSI:-66.0"])
        #expect(ContactLog.lines(for: .measure(rssi: -70.5, txPower: 7, from: "T1", at: t0))
            == ["\(stamp),BLE,T1,,,3,,,,,RSSI:-70.5[BLETransmitPower:7.0]"])
        #expect(ContactLog.lines(for: .share([simple, [1, 2, 3]], from: "T2", at: t0))
            == ["\(stamp),BLE,T2,,,,4,,,,AAGrq6", "\(stamp),BLE,T2,,,,4,,,,AQID"])
        #expect(ContactLog.lines(for: SensorEventRecord(kind: .visit, time: t0, target: "", location: "home"))
            == ["\(stamp),BLE,,,,,,5,,,home"])
        #expect(ContactLog.lines(for: SensorEventRecord(kind: .detectHerald, time: t0, target: "T1")) == ["\(stamp),BLE,T1,,,,,,6,,"])
        #expect(ContactLog.lines(for: SensorEventRecord(kind: .delete, time: t0, target: "T1")) == ["\(stamp),BLE,T1,,,,,,,7,"])
        #expect(ContactLog.lines(for: SensorEventRecord(kind: .receive, time: t0, target: "T1", payload: [1])) == [])
        // Every row has the header's eleven columns.
        for kind in SensorEventRecord.Kind.allCases {
            for l in ContactLog.lines(for: SensorEventRecord(kind: kind, time: t0, target: "T", payload: simple, rssi: -1,
                                                             sharedPayloads: [simple])) {
                #expect(l.split(separator: ",", omittingEmptySubsequences: false).count == 11, "\(kind): \(l)")
            }
        }
        // A target with a comma is quoted, like the reference TextFile.csv.
        #expect(ContactLog.lines(for: .detect("a,b", at: t0)) == ["\(stamp),BLE,\"a,b\",1,,,,,,,"])
    }

    @Test func payloadRowsAreByteExact() {
        #expect(PayloadLog.header == "time,target,payload")
        #expect(PayloadLog.lines(for: .read(simple, from: "C0:11:22:33:44:55", at: t0))
            == ["\(stamp),C0:11:22:33:44:55,10033a0001" + String(repeating: "ab", count: 16)])
        #expect(PayloadLog.lines(for: .read([], from: "T", at: t0)) == [])
        #expect(PayloadLog.lines(for: .measure(rssi: -1, from: "T", at: t0)) == [])
    }

    @Test func statisticsIntervalsPerPeer() {
        var s = StatisticsLog(ownPayload: [9, 9, 9, 9, 9, 9])
        do { let r = s.add(.measure(rssi: -50, from: "T1", at: t0)); #expect(!r) }             // unknown target: ignored
        do { let r = s.add(.read(simple, from: "T1", at: t0)); #expect(!r) }                     // starts the clock
        do { let r = s.add(.measure(rssi: -50, from: "T1", at: t0 + 2)); #expect(r) }           // 2 s
        #expect(s.content == "payload,count,mean,sd,min,max\n")                // one interval: no sd yet
        do { let r = s.add(.measure(rssi: -50, from: "T1", at: t0 + 5)); #expect(r) }           // 3 s
        // Our own payload shared back to us is never a peer.
        _ = s.add(.share([[9, 9, 9, 9, 9, 9]], from: "T1", at: t0 + 6))
        _ = s.add(.share([[9, 9, 9, 9, 9, 9]], from: "T1", at: t0 + 7))
        #expect(s.content == "payload,count,mean,sd,min,max\nAAGrq6,2,2.5,0.7071067811865476,2.0,3.0\n")
        #expect(s.samples["AAGrq6"]?.count == 2)
    }

    @Test func detectionLine() {
        var d = DetectionLog(deviceName: "bench-1", operatingSystem: "Linux", operatingSystemVersion: "6.1.0", ownPayload: [0, 0, 0, 1, 2, 3])
        #expect(d.content == "bench-1,Linux,6.1.0,AQID\n")
        do { let r = d.add(.read([0, 0, 0, 4, 5, 6], from: "T1", at: t0)); #expect(r) }
        do { let r = d.add(.read([0, 0, 0, 4, 5, 6], from: "T1", at: t0)); #expect(!r) }        // already known
        do { let r = d.add(.read([0, 0, 0, 1, 2, 3], from: "T9", at: t0)); #expect(!r) }        // ourselves
        do { let r = d.add(.share([[0, 0, 0, 0, 0, 1]], from: "T2", at: t0)); #expect(r) }
        do { let r = d.add(.measure(rssi: -1, from: "T1", at: t0)); #expect(!r) }
        #expect(d.content == "bench-1,Linux,6.1.0,AQID,AAAB,BAUG\n")
    }

    @Test func textLogLines() {
        #expect(TextLog.line(time: t0, level: .info, subsystem: "Sensor", category: "BLE", message: "started")
            == "\(stamp),info,Sensor,BLE,started")
        #expect(TextLog.line(time: t0, level: .fault, subsystem: "Sensor", category: "BLE", message: "said \"no\", twice\nreally")
            == "\(stamp),fault,Sensor,BLE,\"said 'no', twice really\"")
        #expect(LogLevel.debug < .info && LogLevel.info < .fault && LogLevel.fault < .off)
    }
}

@Suite struct LogDirectoryTests {
    func tempDir() -> String {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("herald-logs-\(UUID().uuidString)").path
        return d
    }

    func read(_ dir: String, _ name: String) -> String {
        (try? String(contentsOfFile: (dir as NSString).appendingPathComponent(name), encoding: .utf8)) ?? "<missing>"
    }

    @Test func writesEveryFileAndAppendsWithOneHeader() throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = LogDirectory.Configuration(deviceName: "bench", operatingSystem: "Linux", operatingSystemVersion: "6",
                                                ownPayload: [1, 1, 1, 2, 2, 2], logLevel: .info)
        var logs = try LogDirectory(path: dir, configuration: config)
        logs.record(.detect("T1", at: t0))
        logs.record(.read(simple, from: "T1", at: t0))
        logs.record(.measure(rssi: -60, from: "T1", at: t0 + 1))
        logs.record(.measure(rssi: -61, from: "T1", at: t0 + 3))
        logs.log(.debug, category: "Test", "dropped below the level", at: t0)
        logs.log(.info, category: "Test", "kept", at: t0)
        try logs.close()
        #expect(read(dir, "contacts.csv") == """
            time,sensor,id,detect,read,measure,share,visit,detectHerald,delete,data
            \(stamp),BLE,T1,1,,,,,,,
            \(stamp),BLE,T1,,2,,,,,,AAGrq6
            2026-11-21 10:00:01.123+0000,BLE,T1,,,3,,,,,RSSI:-60.0
            2026-11-21 10:00:03.123+0000,BLE,T1,,,3,,,,,RSSI:-61.0

            """)
        #expect(read(dir, "payloads.csv") == "time,target,payload\n\(stamp),T1,10033a0001\(String(repeating: "ab", count: 16))\n")
        #expect(read(dir, "statistics.csv") == "payload,count,mean,sd,min,max\nAAGrq6,2,1.5,0.7071067811865476,1.0,2.0\n")
        #expect(read(dir, "detection.csv") == "bench,Linux,6,AgIC,AAGrq6\n")
        #expect(read(dir, "log.txt") == "\(stamp),info,Sensor,Test,kept\n")

        // Reopening appends under the existing header.
        logs = try LogDirectory(path: dir, configuration: config)
        logs.record(.detect("T2", at: t0))
        try logs.close()
        let lines = read(dir, "contacts.csv").split(separator: "\n")
        #expect(lines.count == 6)
        #expect(lines.filter { $0.hasPrefix("time,") }.count == 1)
        #expect(lines.last == "\(stamp),BLE,T2,1,,,,,,,")
    }

    /// The flush timer hands lines to the kernel without close, so a SIGKILL loses at most one interval.
    @Test func flushTimerWritesWithinOneSecond() throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let logs = try LogDirectory(path: dir, configuration: .init(deviceName: "d", flushInterval: 0.5))
        logs.record(.detect("T1", at: t0))
        // Not on disk yet: it waits for the timer (nothing is written synchronously on the caller's thread).
        let start = Date()
        var seen = false
        while Date().timeIntervalSince(start) < 1.0 {
            if read(dir, "contacts.csv").contains("BLE,T1,1,") { seen = true; break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(seen, "contact row not on disk within 1 s")
        try logs.close()
    }

    @Test func errorsNameTheFile() throws {
        let dir = tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A plain file where the directory should be.
        _ = FileManager.default.createFile(atPath: dir, contents: Data())
        #expect(throws: LogError.self) { _ = try LogDirectory(path: dir) }
        do { _ = try LogDirectory(path: dir) } catch { let p = error.path; #expect(p == dir) }
        try FileManager.default.removeItem(atPath: dir)
        // contacts.csv is a directory: opening it fails and the error says which file.
        try FileManager.default.createDirectory(atPath: dir + "/contacts.csv", withIntermediateDirectories: true)
        do {
            _ = try LogDirectory(path: dir)
            Issue.record("opened a directory as contacts.csv")
        } catch {
            let p = error.path, d = error.description
            #expect(p.hasSuffix("contacts.csv"))
            #expect(d.contains("contacts.csv"))
        }
    }
}

@Suite struct LogFileFullDiskTests {
    @Test(.enabled(if: FileManager.default.isWritableFile(atPath: "/dev/full")))
    func aDiskThatTakesNothingKeepsAtMostABoundOfWholeLines() throws {
        // /dev/full refuses every write with ENOSPC, as a full disk does.
        let file = try LogFile(appending: "/dev/full", header: nil)
        let line = String(repeating: "x", count: 99)
        var errors = 0
        for _ in 0..<20_000 {  // 2 MB of lines, twice the bound
            do throws(LogError) { try file.append(line) } catch { errors += 1 }
        }
        #expect(errors > 0)
        #expect(file.pendingBytes <= LogFile.maximumPendingBytes && file.pendingBytes % 100 == 0)
        // 1 MiB holds 10,485 lines of 100 bytes; the rest of the 20,000 are dropped and counted.
        #expect(file.droppedLines == 20_000 - LogFile.maximumPendingBytes / 100)
    }
}
