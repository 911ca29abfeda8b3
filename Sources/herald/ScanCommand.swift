import ArgumentParser
import BluetoothHost
import Foundation
import HeraldRuntime

struct ScanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "Observe advertisements: a live table of nearby devices, or each report; then a per-device summary (a bench tester).",
        discussion: """
            On a terminal: a table of nearby devices redrawn every second, strongest first (address, kind, \
            decoded payload, RSSI now and mean, advert interval, last seen), in colour unless NO_COLOR is set \
            or TERM=dumb. Otherwise (or with --lines): one line per report, or JSON Lines with --json \
            (times to the millisecond). At the end the summary per device (kind, address, pseudo address, \
            advert count, interval and RSSI statistics, Tx power) goes to stderr, or alone to stdout with \
            --summary-only (one JSON object with --json). Output files (--report, --log-dir, --btsnoop) are \
            checked before the scan starts.
            """
    )

    @OptionGroup var controller: ControllerOptions
    @Option(name: .long, parsing: .unconditional, help: "Seconds to scan (default: until interrupted).") var duration: Double?
    @Flag(name: .long, help: "Active scanning: ask for scan responses.") var active = false
    @Flag(name: .long, help: "One JSON object per report (JSON Lines); the summary as JSON too.") var json = false
    @Flag(name: .long, help: "Print only the summary, on stdout.") var summaryOnly = false
    @Flag(name: .long, help: "One line per report even on a terminal (no live table).") var lines = false
    @Option(name: .long, help: "Write a self-contained HTML report (RSSI over time per device).") var report: String?
    @Option(name: .long, help: "Log each report to Herald logs in this directory (contacts.csv detect/measure rows).") var logDir: String?
    @Option(name: .long, help: "log.txt level: debug, info, fault or off.") var logLevel: String = "info"
    @Flag(name: .long, help: "Connect to each Herald advertiser once and read its payload over GATT.") var readPayloads = false
    @Option(name: .long, help: ByteOrderChoice.help) var byteOrder: ByteOrderChoice = .spec
    @Option(name: .long, help: "Show only devices whose local name contains this (case-insensitive).") var name: String?
    @Option(name: .long, help: "Show only devices advertising this service UUID (fcf6, or the 128-bit form).") var service: String?
    @Option(name: .long, help: "Show only this device: AA:BB:CC:DD:EE:FF.") var address: String?
    @Option(name: .long, help: "Show only devices of this kind: \(DeviceKind.allCases.map(\.rawValue).joined(separator: ", ")).") var kind: String?
    @Option(name: .long, parsing: .unconditional, help: "Show only reports (and devices last heard) at or above this RSSI, dBm.") var minRssi: Int?
    @Option(name: .long, help: "The live table's first sort key: rssi, last-seen, interval, address (keys r, l, i, a switch it).") var sort: String = "rssi"
    @Option(name: .long, help: "Write one CSV row per advertising report shown: time, address, kind, RSSI, payload.") var csv: String?

    var filter: ScanFilter {
        ScanFilter(name: name, service: service, address: address, kind: kind.flatMap(DeviceKind.init(rawValue:)), minRSSI: minRssi)
    }

    func validate() throws {
        if let duration, !(duration > 0) { throw ValidationError("--duration must be positive") }
        if LogLevel(rawValue: logLevel) == nil { throw ValidationError("--log-level must be debug, info, fault or off") }
        if let kind, DeviceKind(rawValue: kind) == nil {
            throw ValidationError("--kind must be one of \(DeviceKind.allCases.map(\.rawValue).joined(separator: ", ")), got '\(kind)'")
        }
        if let address, GATTCommand.parseAddress(address) == nil {
            throw ValidationError("--address: expected AA:BB:CC:DD:EE:FF, got '\(address)'")
        }
        if let service {
            let s = ScanFilter.normalised(service: service)
            let hex = Set("0123456789abcdef-")
            guard (s.count == 4 || (s.count == 36 && s.filter { $0 == "-" }.count == 4)), s.allSatisfy(hex.contains) else {
                throw ValidationError("--service: expected a 16-bit UUID (fcf6) or a 128-bit one (428132af-4746-42d3-801e-4572d65bfd9b), got '\(service)'")
            }
        }
        if ScanSortKey(rawValue: sort) == nil { throw ValidationError("--sort must be rssi, last-seen, interval or address, got '\(sort)'") }
    }

    func run() throws {
        try runReportingErrors {
            // A broken board profile stops the scan before it writes anything.
            try controller.checkBoards()
            // An hour's bench run must not end in "cannot write the report": try the file now.
            if let report { try Self.checkWritable(report) }
            let csvFile = try csv.map(ScanCSV.init(path:))
            var logs: LogDirectory?
            if let logDir {
                do {
                    logs = try LogDirectory(path: logDir, configuration: .init(logLevel: LogLevel(rawValue: logLevel) ?? .info))
                } catch {
                    throw CLIError(.usage, "cannot open logs: \(CommandMessage.reason(error))")
                }
            }
            let live = !json && !summaryOnly && !lines && isatty(STDOUT_FILENO) != 0
            var table = ScanLiveTable(colour: ScanLiveTable.terminalHasColour())
            table.filter = filter
            table.sortKey = ScanSortKey(rawValue: sort) ?? .rssi
            let keys = live ? KeyboardInput() : nil
            defer { keys?.restore() }
            let title = "herald scan \(controller.transport ?? controller.board ?? "")"
            let printer = ReportPrinter(json: json, active: active, perReport: !summaryOnly && !live, logs: logs,
                                        summary: ScanSummary(start: MonotonicClock.now()),
                                        reader: readPayloads ? BenchPayloadReader(activeScanning: active) : nil, csv: csvFile)
            let stack = BluetoothStack(configuration: StackSession<ReportPrinter, 1, 16, 128>.defaultConfiguration(),
                                       database: try minimalDatabase(), app: printer)
            let session = try controller.openSession(stack)
            defer { session.close() }
            let info = try session.bringUp()
            logs?.log(.info, category: "Scan", "controller ready (\(info.address.description)); scanning \(active ? "actively" : "passively")")
            let stop = SignalFlag.install()
            let started = MonotonicClock.now()
            session.app.summary = ScanSummary(start: started)
            session.app.summary.byteOrder = byteOrder.order
            session.app.summary.filter = filter
            let deadline = duration.map { started + UInt64($0 * 1000) }
            var nextDraw: UInt64 = 0
            if live { FileHandle.standardOutput.write(Data("\u{1B}[2J".utf8)) }
            try session.run(deadline: deadline) { s in
                let now = MonotonicClock.now()
                if let keys, let c = keys.read() {
                    let next = table.sortKey.after(keyPress: c)
                    if next != table.sortKey { table.sortKey = next; nextDraw = 0 }
                }
                if live, now >= nextDraw {
                    nextDraw = now + 1000
                    let frame = table.frame(s.app.summary, elapsed: Double(now - started) / 1000, title: title)
                    FileHandle.standardOutput.write(Data(frame.utf8))
                }
                // A supervised session brings a failed controller up again (Hardware Error, Zephyr assert):
                // only an unsupervised one stops here.
                if s.supervision == nil, case .failed(let f) = s.stack.hci.state {
                    throw CLIError(exitCode: 4, message: "controller failed: \(ControllerDescriptions.failureDescription(f))")
                }
                return stop.isSet ? .stop : .keepRunning
            }
            try? session.perform { $0.control.stopScanning() }
            // --duration is up (not an interrupt): a payload read under way is finished, each of its
            // phases bounded (BenchPayloadReader.finishReads), so a link that came up at the end is read.
            if !stop.isSet, session.app.reader?.isIdle == false {
                session.app.reader?.finishReads()
                try session.run(deadline: MonotonicClock.now() + 20_000) { s in
                    stop.isSet || s.app.reader?.isIdle != false ? .stop : .keepRunning
                }
            }
            session.app.reader?.scanEnded()
            session.app.collectPayloads()
            session.releaseLinks()  // --read-payloads' link
            let elapsed = Double(MonotonicClock.now() - started) / 1000
            let summary = session.app.summary
            if live {  // the last frame stays on the screen, complete
                FileHandle.standardOutput.write(Data(table.frame(summary, elapsed: elapsed, title: title).utf8))
            }
            try finish(summary, elapsed: elapsed, logs: logs)
        }
    }

    /// Opens (creating if need be) the file for writing and removes it again if it was not there.
    static func checkWritable(_ path: String) throws {
        let existed = FileManager.default.fileExists(atPath: path)
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw CLIError(.usage, FileProblem(path: path, action: "write", why: CommandMessage.strerrorText(errno)).description)
        }
        close(fd)
        if !existed { unlink(path) }
    }

    struct SummaryDocument: Encodable {
        var durationSeconds: Double
        var reports: Int
        var devices: [ScanDeviceSummary]
        /// How payload codes were decoded (`spec` or `apps`).
        var byteOrder: String
        /// Apple devices the reference apps' device filter rules out.
        var ignoredAppleDevices: Int
        /// Devices given up, least recently heard first, to keep at most `maxDevices`.
        var droppedDevices: Int
        var maxDevices: Int
    }

    func finish(_ summary: ScanSummary, elapsed: Double, logs: LogDirectory?) throws {
        let text: String
        if json {
            let e = JSONEncoder()
            e.outputFormatting = [.sortedKeys]
            let doc = SummaryDocument(durationSeconds: elapsed, reports: summary.reports, devices: summary.devices,
                                      byteOrder: summary.byteOrder.optionName, ignoredAppleDevices: summary.ignoredAppleDevices,
                                      droppedDevices: summary.evictedTracks, maxDevices: summary.maxTracks)
            text = String(decoding: try e.encode(["summary": doc]), as: UTF8.self) + "\n"
        } else {
            text = summary.table(durationSeconds: elapsed)
        }
        if summaryOnly { print(text, terminator: "") } else { FileHandle.standardError.write(Data(text.utf8)) }
        fflush(nil)
        if let report {
            let html = ScanReportHTML.render(summary, title: "herald scan — \(controller.transport ?? controller.board ?? "controller")",
                                             durationSeconds: elapsed)
            do { try html.write(toFile: report, atomically: true, encoding: .utf8) } catch {
                throw CLIError(.usage, FileProblem(path: report, action: "write", why: CommandMessage.reason(error)).description)
            }
            FileHandle.standardError.write(Data("scan: report written to \(report)\n".utf8))
        }
        if let logs {
            logs.log(.info, category: "Scan", "stopped after \(summary.reports) reports")
            do { try logs.close() } catch { throw CLIError(exitCode: 1, message: "logs: \(error)") }
        }
    }
}

/// Scans from bring-up on, prints each report as it arrives and keeps the per-device summary.
struct ReportPrinter: LEApplication {
    /// `--read-payloads` reads one payload a link: no use for the LE 2M PHY (see `CheckRunner`).
    static var asksForLE2MPHY: Bool { false }
    let json: Bool
    let active: Bool
    let perReport: Bool
    let logs: LogDirectory?
    var summary: ScanSummary
    var reader: BenchPayloadReader?
    var csv: ScanCSV?
    var count = 0
    let encoder: JSONEncoder = {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        // Milliseconds: adverts come tens of milliseconds apart.
        e.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(iso8601Timestamp(date, fractionalSeconds: true))
        }
        return e
    }()

    mutating func stackDidBecomeReady(_ info: ControllerInfo, now: UInt64, control: inout StackControl) {
        // Continuous: interval = window = 100 ms (Core 5.4 Vol 4 Part E 7.8.10, units of 0.625 ms).
        control.startScanning(active: active)
    }

    mutating func stackDidReceive(advertisingReport: borrowing AdvertisingReport, now: UInt64, control: inout StackControl) {
        count += 1
        let isNew = summary.add(advertisingReport, now: now)
        if reader != nil {
            let address = advertisingReport.address
            reader!.consider(address, isHerald: summary.isHerald(address), connectable: advertisingReport.kind.isConnectable,
                             now: now, control: &control)
        }
        if let logs {
            let target = advertisingReport.address.address.description
            let time = Date()
            if isNew { logs.record(.detect(target, at: time)) }
            if let rssi = advertisingReport.rssi {
                logs.record(.measure(rssi: Double(rssi), txPower: advertisingReport.txPower.map(Double.init), from: target, at: time))
            }
        }
        guard perReport || csv != nil else { return }
        if !summary.filter.isEmpty {
            guard let d = summary.device(advertisingReport.address),
                  summary.filter.matches(report: advertisingReport.rssi.map(Int.init), of: d) else { return }
        }
        let record = AdvertisementRecord(advertisingReport)
        if let csv {
            let d = summary.device(advertisingReport.address)
            csv.write(record, kind: d?.kind ?? .other, heraldPayload: d?.payloadText)
        }
        guard perReport else { return }
        if json, let data = try? encoder.encode(record) {
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(record.line)
        }
        fflush(nil)
    }
}

extension ReportPrinter {
    mutating func stackDidConnect(_ link: ConnectionSummary, now: UInt64, control: inout StackControl) {
        reader?.didConnect(link, now: now, control: &control)
        collectPayloads()
    }

    mutating func stackDidFailToConnect(to peer: DeviceAddress, status: HCIStatus, now: UInt64, control: inout StackControl) {
        reader?.didFailToConnect(to: peer, status: status, control: &control)
        collectPayloads()
    }

    mutating func stackDidDisconnect(handle: UInt16, reason: HCIStatus, now: UInt64, control: inout StackControl) {
        reader?.didDisconnect(handle: handle, reason: reason, control: &control)
        collectPayloads()
    }

    mutating func stackDidReceiveATT(handle: UInt16, pdu: Span<UInt8>, now: UInt64, control: inout StackControl) {
        reader?.didReceiveATT(handle: handle, pdu: pdu, now: now, control: &control)
        collectPayloads()
    }

    var applicationDeadline: UInt64? { reader?.nextDeadline }

    mutating func stackTimerFired(now: UInt64, control: inout StackControl) {
        reader?.timerFired(now: now, control: &control)
        collectPayloads()
    }

    /// Payloads read since the last call go into the summary and, with --log-dir, the Herald logs.
    mutating func collectPayloads() {
        guard let fresh = reader?.takeNewOutcomes(), !fresh.isEmpty else { return }
        for (address, outcome) in fresh {
            summary.attach(outcome, to: address)
            switch outcome {
            case .payload(let bytes):
                logs?.record(.read(bytes, from: address))
                if perReport { FileHandle.standardError.write(Data("scan: read payload \(PayloadDescription.text(bytes, order: summary.byteOrder)) from \(address)\n".utf8)) }
            case .failed(let why):
                logs?.log(.fault, category: "Scan", "payload read from \(address) failed: \(why)")
                if perReport { FileHandle.standardError.write(Data("scan: payload read from \(address) failed: \(why)\n".utf8)) }
            }
        }
    }
}

extension ReportPrinter: ApplicationStatistics {
    var applicationStatistics: [(String, Int)] { [("ignoredAppleDevices", summary.ignoredAppleDevices)] }
}
