// libFuzzer target: the log directories `herald analyse` reads (HeraldRuntime/Analysis): each of two
// devices' detection.csv, log.txt, served-payloads.csv and contacts.csv, written to a scratch
// directory and read by DeviceLogReader.load exactly as the command does, then the efficacy
// analysis and its table and CSVs. Input: the eight files' bytes separated by NUL octets, in that
// order (device A's four, then device B's); an empty or missing section leaves the file out.
// Invariants: nothing traps or over-reads; every malformed line is reported with its file and a line
// number inside the file; continuity and detection are fractions; no pair has more windows than
// the period holds.
// fuzz: max_len=8192
// FoundationEssentials' readBytesFromFile leaks its 4 KB buffer when the file is empty (found by
// Fuzz/SecretKey.swift; swift-foundation's, not ours): leak detection off, empty files still fuzzed.
// fuzz: flags=-detect_leaks=0
import Foundation
import HeraldRuntime

func check(_ condition: Bool, _ message: StaticString) {
    if !condition { fatalError("invariant: \(message)") }
}

let scratch: String = {
    let dir = NSTemporaryDirectory() + "herald-fuzz-analyse-\(getpid())"
    for d in ["a", "b"] { try? FileManager.default.createDirectory(atPath: dir + "/" + d, withIntermediateDirectories: true) }
    atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "herald-fuzz-analyse-\(getpid())") }
    return dir
}()
let names = ["detection.csv", "log.txt", "served-payloads.csv", "contacts.csv"]

func fuzzOne(_ bytes: [UInt8]) {
    let sections = bytes.split(separator: 0, maxSplits: 7, omittingEmptySubsequences: false)
    var lineCounts: [String: Int] = [:]
    for (k, device) in ["a", "b"].enumerated() {
        for (i, name) in names.enumerated() {
            let path = "\(scratch)/\(device)/\(name)"
            let index = k * 4 + i
            if index < sections.count, !sections[index].isEmpty {
                let data = Data(sections[index])
                _ = FileManager.default.createFile(atPath: path, contents: data)
                lineCounts[path] = data.split(separator: 10, omittingEmptySubsequences: false).count
            } else {
                unlink(path)
            }
        }
    }
    var logs: [DeviceLog] = []
    for device in ["a", "b"] {
        guard let (log, bad) = try? DeviceLogReader.load("\(scratch)/\(device)") else { continue }
        for b in bad {
            check(b.file.hasPrefix(scratch), "malformed line names its file")
            if let n = lineCounts[b.file] { check(b.line >= 0 && b.line <= n, "malformed line number within the file") }
        }
        check(log.readings.count <= log.rows + log.unattributedMeasurements + log.readings.count, "readings")
        logs.append(log)
    }
    guard logs.count == 2, let report = try? EfficacyAnalysis.analyse(logs) else { return }
    check(report.windowsPerPair > 0, "a period has windows")
    for p in report.pairs {
        check(p.windows <= report.windowsPerPair, "no more windows than the period")
        check(p.continuity >= 0 && p.continuity <= 1, "continuity is a fraction")
    }
    check(report.detectedPairs <= report.maxPairs, "detected pairs bound")
    check(report.achievedWindows <= report.maxWindows, "achieved windows bound")
    _ = report.table
    _ = report.summaryCSV
    _ = report.continuityCSV
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(size > 0 ? Array(UnsafeBufferPointer(start: data, count: size)) : [])
    return 0
}
