import ArgumentParser
import Foundation
import Herald
import HeraldRuntime

/// `herald analyse`: Fair Efficacy Formula terms (detection, continuity, longevity) of a test with
/// several devices, from each device's log directory.
struct AnalyseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyse",
        abstract: "Detection, continuity and longevity of a multi-device test from its Herald log directories.",
        discussion: """
            Each LOGDIR holds one device's contacts.csv and detection.csv (from `herald` or the Herald apps).
            Prints a table and writes formal-summary.csv and formal-continuity.csv into --output, by default the
            directory holding the first LOGDIR (the Herald analysis scripts' layout: one sub-folder per phone).
            Times are `yyyy-MM-dd HH:mm:ss[.SSS]+0000` or ISO 8601 with Z.
            """,
        aliases: ["analyze"]
    )

    @Argument(help: "One log directory per device.") var logDirectories: [String]
    @Option(name: .long, help: "Start of the contact event (default: when the last device started logging).") var start: String?
    @Option(name: .long, help: "End of the contact event (default: when the first device stopped logging).") var end: String?
    @Option(name: .long, parsing: .unconditional, help: "Continuity window, seconds; a remainder under half a window joins the last one.") var window: Double = 30
    @Option(name: .long, parsing: .unconditional, help: "Length of the first and last periods compared for longevity, seconds.") var longevity: Double = 3600
    @Option(name: .long, help: "Directory for the CSV files (default: the first LOGDIR's parent).") var output: String?
    @Flag(name: .long, help: "Print the table only; write no CSV.") var noCsv = false
    @Option(name: .long, help: ByteOrderChoice.help) var byteOrder: ByteOrderChoice = .spec

    func validate() throws {
        if logDirectories.count < 2 { throw ValidationError("give the log directories of at least two devices") }
        // One device's logs given twice would be analysed as two devices meeting each other.
        var seen: [String: String] = [:]
        for dir in logDirectories {
            let key = URL(fileURLWithPath: dir).standardizedFileURL.resolvingSymlinksInPath().path
            if let first = seen[key] {
                throw ValidationError(first == dir ? "\(dir) is given twice (one log directory per device)"
                                                   : "\(first) and \(dir) are the same directory (one log directory per device)")
            }
            seen[key] = dir
        }
        // Milliseconds in an Int64: a longer window or longevity period would trap on conversion.
        if !(window > 0) || !(window < 1e12) { throw ValidationError("--window must be positive and under 10^12 seconds") }
        if !(longevity >= 0) || !(longevity < 1e12) { throw ValidationError("--longevity must be 0...10^12 seconds") }
    }

    func run() throws {
        try runReportingErrors {
            func note(_ s: String) { FileHandle.standardError.write(Data((s + "\n").utf8)) }
            func time(_ s: String?, _ name: String) throws -> Int64? {
                guard let s else { return nil }
                guard let t = ContactMatcher.parseLogTime(s) else { throw CLIError(exitCode: 2, message: "--\(name) \"\(s)\" is not a time") }
                return t
            }
            var devices: [DeviceLog] = []
            var malformed = 0
            for dir in logDirectories {
                // A file where a directory belongs: Foundation's answer is a bare "file error 256".
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory), !isDirectory.boolValue {
                    throw CLIError(exitCode: 2, message: "\(dir) is a file, not a log directory (each LOGDIR holds one device's contacts.csv)")
                }
                do {
                    let (log, bad) = try DeviceLogReader.load(dir)
                    for b in bad { note("malformed: \(b)") }
                    malformed += bad.count
                    devices.append(log)
                } catch {
                    throw CLIError(exitCode: 2, message: CommandMessage.reason(error))
                }
            }
            let options = EfficacyOptions(start: try time(start, "start"), end: try time(end, "end"),
                                          windowMilliseconds: Int64(window * 1000), longevityMilliseconds: Int64(longevity * 1000))
            let report: EfficacyReport
            do { report = try EfficacyAnalysis.analyse(devices, options: options) } catch {
                throw CLIError(exitCode: 1, message: CommandMessage.reason(error))
            }
            print(report.table, terminator: "")
            // What each device served, decoded (from served-payloads.csv: the reference apps' logs hold
            // only short names, so their devices have no line here).
            for d in devices {
                guard let bytes = d.firstServedPayload else { continue }
                print("\(d.label) served \(PayloadDescription.text(bytes, order: byteOrder.order)) (--byte-order \(byteOrder.rawValue))")
            }
            if !noCsv {
                // Through URL: corelibs Foundation's NSString.deletingLastPathComponent traps on a bare name.
                let output = self.output ?? URL(fileURLWithPath: logDirectories[0]).standardizedFileURL.deletingLastPathComponent().path
                let summary = (output as NSString).appendingPathComponent("formal-summary.csv")
                let pairs = (output as NSString).appendingPathComponent("formal-continuity.csv")
                var writing = summary
                do {
                    try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
                    try report.summaryCSV.write(toFile: summary, atomically: true, encoding: .utf8)
                    writing = pairs
                    try report.continuityCSV.write(toFile: pairs, atomically: true, encoding: .utf8)
                } catch {
                    throw CLIError(.usage, FileProblem(path: writing, action: "write", why: CommandMessage.reason(error)).description)
                }
                note("wrote \(summary) and \(pairs)")
            }
            if malformed > 0 { note("\(malformed) malformed line(s) skipped") }
        }
    }
}
