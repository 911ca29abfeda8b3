import ArgumentParser
import BluetoothHost
import Foundation
import HeraldRuntime

struct ScanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Observe advertisements: print each report with its decoded AD fields."
    )

    @OptionGroup var controller: ControllerOptions
    @Option(name: .long, help: "Seconds to scan (default: until interrupted).") var duration: Double?
    @Flag(name: .long, help: "Active scanning: ask for scan responses.") var active = false
    @Flag(name: .long, help: "One JSON object per report (JSON Lines).") var json = false

    func run() throws {
        try runReportingErrors {
            let printer = ReportPrinter(json: json, active: active)
            let stack = BluetoothStack(configuration: StackSession<ReportPrinter, 1, 16, 128>.defaultConfiguration(),
                                       database: try minimalDatabase(), app: printer)
            let session = try controller.openSession(stack)
            defer { session.close() }
            _ = try session.bringUp()
            let stop = SignalFlag.install()
            let deadline = duration.map { MonotonicClock.now() + UInt64($0 * 1000) }
            try session.run(deadline: deadline) { s in
                if case .failed(let f) = s.stack.hci.state {
                    throw CLIError(exitCode: 4, message: "controller failed: \(ControllerDescriptions.failureDescription(f))")
                }
                return stop.isSet ? .stop : .keepRunning
            }
            try? session.perform { $0.control.stopScanning() }
            FileHandle.standardError.write(Data("scan: \(session.app.count) reports\n".utf8))
        }
    }
}

/// Scans from bring-up on and prints each report as it arrives.
struct ReportPrinter: LEApplication {
    let json: Bool
    let active: Bool
    var count = 0
    let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        e.dateEncodingStrategy = .iso8601
        return e
    }()

    mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        // Continuous: interval = window = 100 ms (Core 5.4 Vol 4 Part E 7.8.10, units of 0.625 ms).
        control.startScanning(active: active)
    }

    mutating func stackDidReceive(advertisingReport: borrowing AdvertisingReport, now: UInt64, control: inout StackControl) {
        let record = AdvertisementRecord(advertisingReport)
        count += 1
        if json, let data = try? encoder.encode(record) {
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(record.line)
        }
        fflush(nil)
    }
}
