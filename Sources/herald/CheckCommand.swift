import ArgumentParser
import BluetoothHost
import Foundation
import HeraldRuntime

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Bench-test a Herald device against the Herald specifications, rule by rule.",
        discussion: """
            Observes the device's adverts for --duration seconds from the first one heard (without --address: the first Herald \
            device heard), connects at ATT_MTU 23, discovers its database and reads every value (Read Blob \
            past 22 octets), ends the link and listens for its next advert. With --active it also writes \
            its signal characteristic (an RSSI message, a payload message, a payload message in 20-octet \
            Write Requests) and connects again to read its payload a second time. Then one line per rule: \
            PASS, WARN (allowed, not as the specification says), FAIL or SKIP (not observable in this run, \
            and why), with the evidence. Exit status 0 when no rule failed, 1 when one did, 5 when no \
            device was heard within 30 s (or --duration, if longer).
            """
    )

    @OptionGroup var controller: ControllerOptions
    @Option(name: .long, help: "The device under test: AA:BB:CC:DD:EE:FF (default: the first Herald device heard).") var address: String?
    @Option(name: .long, parsing: .unconditional, help: "Seconds to observe adverts before connecting.") var duration: Double = 10
    @Flag(name: .long, help: "Also write the signal characteristic and reconnect.") var active = false
    @Flag(name: .long, help: "One JSON object per rule and line (rule, status, statement, source, evidence).") var json = false
    @Option(name: .long, help: "Write a self-contained HTML report.") var report: String?
    @OptionGroup var period: PayloadPeriodOption
    @Option(name: .long, help: "Byte order of the codes in the payloads --active writes: spec (big-endian, the Simple payload specification, as our wearable reads them) or apps (little-endian, as the Herald reference apps read them).") var byteOrder: ByteOrderChoice = .spec

    func validate() throws {
        guard duration > 0, duration <= 3600 else {
            throw ValidationError("--duration must be more than 0 and at most 3600 seconds (got \(duration.rounded() == duration && abs(duration) < 1e15 ? String(Int(duration)) : String(duration)))")
        }
        if let address, GATTCommand.parseAddress(address) == nil {
            throw ValidationError("--address: expected AA:BB:CC:DD:EE:FF, got '\(address)'")
        }
    }

    func run() throws {
        try runReportingErrors {
            if let report { try ScanCommand.checkWritable(report) }
            let start = MonotonicClock.now()
            let runner = CheckRunner(address: address.flatMap(GATTCommand.parseAddress), observeSeconds: duration, active: active,
                                     payloadPeriod: Double(period.payloadPeriod ?? 360), byteOrder: byteOrder.order, start: start)
            let stack = BluetoothStack(configuration: StackSession<CheckRunner, 1, 16, 128>.defaultConfiguration(),
                                       database: try minimalDatabase(), app: runner)
            let session = try controller.openSession(stack)
            defer { session.close() }
            session.supervision = nil  // a check reports a failed controller rather than restarting it
            let stop = SignalFlag.install()
            _ = try session.bringUp()
            let begun = MonotonicClock.now()
            // Observation, then at most: connection 8 s, discovery and reads 60 s, writes, release 5 s, reread 20 s.
            try session.run(deadline: begun + UInt64(duration * 1000) + 120_000) { s in
                if case .failed(let f) = s.stack.hci.state {
                    throw CLIError(exitCode: 4, message: "controller failed: \(ControllerDescriptions.failureDescription(f))")
                }
                return s.app.isDone || stop.isSet ? .stop : .keepRunning
            }
            try? session.perform { $0.control.stopScanning() }
            session.releaseLinks()
            let app = session.app
            if stop.isSet, !app.isDone { throw CLIError(exitCode: 130, message: "interrupted") }
            guard var observations = app.observations else {
                throw CLIError(exitCode: 5, message: app.failure ?? "no device heard")
            }
            if observations.observedSeconds == 0 { observations.observedSeconds = duration }
            let verdicts = HeraldCheck.judge(observations)
            let device = "\(observations.address) (\(observations.addressType))"
            print(json ? CheckReport.jsonLines(verdicts, device: device) : CheckReport.text(verdicts, device: device), terminator: "")
            fflush(nil)
            if let report {
                let html = CheckReport.html(verdicts, device: device, title: "herald check — \(device)", summary: app.summary,
                                            durationSeconds: observations.observedSeconds)
                do { try html.write(toFile: report, atomically: true, encoding: .utf8) } catch {
                    throw CLIError(.usage, FileProblem(path: report, action: "write", why: CommandMessage.reason(error)).description)
                }
                FileHandle.standardError.write(Data("check: report written to \(report)\n".utf8))
            }
            let status = HeraldCheck.exitStatus(verdicts)
            if status != 0 {
                let failed = verdicts.filter { $0.status == .fail }.map(\.rule).joined(separator: ", ")
                throw CLIError(exitCode: status, message: "\(device) failed \(failed)")
            }
        }
    }
}
