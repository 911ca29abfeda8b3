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
            let session = try controller.openSession()
            defer { session.snoop?.close(); session.transport.close() }
            let info = try session.bringUp()
            // Scan continuously: interval = window = 100 ms (Core 5.4 Vol 4 Part E 7.8.10 units of 0.625 ms).
            try session.send(HCILESetScanParameters(
                scanType: active ? .active : .passive, interval: 0x00A0, window: 0x00A0,
                ownAddressType: info.addressType == .publicDevice ? .publicAddress : .randomAddress,
                filterPolicy: .acceptAll), tag: .gap)
            try session.send(HCILESetScanEnable(enable: true, filterDuplicates: false), tag: .gap)
            let stop = SignalFlag.install()
            var printer = ReportPrinter(json: json)
            let deadline = duration.map { MonotonicClock.now() + UInt64($0 * 1000) }
            try session.run(delegate: &printer, deadline: deadline) { p, _ in
                if let failure = p.failure { throw CLIError(exitCode: 4, message: "controller failed: \(ControllerDescriptions.failureDescription(failure))") }
                return stop.isSet ? .stop : .keepRunning
            }
            try? session.send(HCILESetScanEnable(enable: false, filterDuplicates: false), tag: .gap)
            FileHandle.standardError.write(Data("scan: \(printer.count) reports\n".utf8))
        }
    }
}

/// Prints reports as they arrive.
struct ReportPrinter: HostDelegate {
    let json: Bool
    var count = 0
    var failure: ControllerFailure?
    let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        e.dateEncodingStrategy = .iso8601
        return e
    }()

    mutating func hostDidReceive(advertisingReport: borrowing AdvertisingReport) {
        let record = AdvertisementRecord(advertisingReport)
        count += 1
        if json, let data = try? encoder.encode(record) {
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(record.line)
        }
        fflush(nil)
    }

    mutating func hostControllerDidFail(_ f: ControllerFailure) { failure = f }
}
