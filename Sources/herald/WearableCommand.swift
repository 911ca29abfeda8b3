import ArgumentParser
import BluetoothHost
import Foundation
import Herald
import HeraldRuntime

struct WearableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wearable",
        abstract: "Be a Herald wearable (peripheral only for now): advertise, serve the payload, take signal writes.",
        discussion: """
            The Simple payload rotates every 360 s period; the advertising address is a resolvable private \
            address that changes at the same instant. Without --secret-key-file the secret is \
            <log-dir>/wearable-secret.key (created on first use, mode 0600).
            """
    )

    enum PayloadKind: String, ExpressibleByArgument, CaseIterable {
        case simple, test
    }

    @OptionGroup var controller: ControllerOptions
    @Option(name: .long, help: "simple: the rotating Simple payload; test: a fixed Simple payload (identifier 000102…0f).")
    var payload: PayloadKind = .simple
    @Option(name: .long, help: "Secret key file (2048 bytes, mode 0600) with its IRK beside it in FILE.irk.") var secretKeyFile: String?
    @Option(name: .long, help: "Directory for the generated secret when no --secret-key-file is given.") var logDir: String = "herald-logs"
    @Option(name: .long, help: "ISO 3166-1 numeric country code.") var country: Int = 0
    @Option(name: .long, help: "State code.") var state: Int = 0
    @Option(name: .long, help: "Key schedule epoch, ISO 8601 (default 2026-01-01T00:00:00Z).") var epoch: String?
    @Option(name: .long, help: "Advertising interval in milliseconds (20...10240).") var intervalMs: Int = 200
    @Flag(name: .long, help: "Advertise and serve the registered 16-bit service UUID 0xFCF6 instead of the 128-bit one.") var registeredUUID = false
    @Flag(name: .long, help: "One JSON object per event (JSON Lines) on standard output.") var jsonEvents = false
    @Option(name: .long, help: "Seconds to run (default: until interrupted).") var duration: Double?

    func validate() throws {
        guard (0...0xFFFF).contains(country), (0...0xFFFF).contains(state) else {
            throw ValidationError("--country and --state are 16-bit codes (0...65535)")
        }
        guard (20...10_240).contains(intervalMs) else { throw ValidationError("--interval-ms must be 20...10240") }
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
    }

    func run() throws {
        try runReportingErrors {
            let keyEpoch: KeyEpoch
            do { keyEpoch = try KeyTools.epoch(epoch) } catch { throw CLIError(exitCode: 2, message: "\(error)") }
            let header = PayloadHeader(protocolAndVersion: 0x10, countryCode: UInt16(country), stateCode: UInt16(state))
            let keyPath: String
            do {
                if let secretKeyFile {
                    keyPath = secretKeyFile
                } else {
                    let found = try WearableSecret.defaultPath(logDirectory: logDir)
                    keyPath = found.path
                    FileHandle.standardError.write(Data("wearable: \(found.created ? "created" : "using") secret key \(keyPath)\n".utf8))
                }
            } catch { throw CLIError(exitCode: 2, message: "\(error)") }
            let secret: [UInt8], irk: InlineArray<16, UInt8>
            do {
                secret = try SecretKeyFile.loadSecretKey(keyPath)
                irk = try SecretKeyFile.loadIRK(forSecretKey: keyPath)
            } catch { throw CLIError(exitCode: 2, message: "\(error)") }
            let advertising = HeraldAdvertisingConfiguration(
                identifiers: registeredUUID ? .registered : .specification, intervalMilliseconds: intervalMs,
                irk: irk, epoch: keyEpoch)
            let options = PeripheralRunOptions(role: "wearable", deviceName: "herald", json: jsonEvents, duration: duration)
            switch payload {
            case .simple:
                let source: SimplePayloadSource
                do { source = try SimplePayloadSource(secretKey: secret.span, header: header, epoch: keyEpoch) } catch {
                    throw CLIError(exitCode: 2, message: "secret key: \(error)")
                }
                if case .pastHorizon = keyEpoch.horizon(at: Int64(Date().timeIntervalSince1970)) {
                    throw CLIError(exitCode: 2, message: "the key schedule from epoch \(KeyTools.iso8601(keyEpoch.unixSeconds)) has run out; choose a later --epoch")
                }
                try runHeraldPeripheral(source: source, advertising: advertising, controller: controller, options: options)
            case .test:
                var id = ContactIdentifier(repeating: 0)
                for i in 0..<16 { id[i] = UInt8(i) }
                let source: FixedPayloadSource<32>
                do { source = try .simpleTest(header: header, contactIdentifier: id) } catch {
                    throw CLIError(exitCode: 1, message: "internal error building the test payload: \(error)")
                }
                try runHeraldPeripheral(source: source, advertising: advertising, controller: controller, options: options)
            }
        }
    }
}

/// What the peripheral roles (wearable, beacon) share on the command line.
struct PeripheralRunOptions {
    var role: String
    var deviceName: String
    var json: Bool
    var duration: Double?
}

/// Runs a Herald peripheral on the controller until the duration passes or SIGINT/SIGTERM.
func runHeraldPeripheral<Source: HeraldPayloadSource>(
    source: Source, advertising: HeraldAdvertisingConfiguration, controller: ControllerOptions, options: PeripheralRunOptions
) throws {
    typealias App = HeraldPeripheralApplication<Source, PeripheralEventPrinter, 4, 512, 1024>
    let sink = PeripheralEventSink()
    let printer = PeripheralEventPrinter(json: options.json, sink: sink)
    var peripheral: HeraldPeripheral<Source, 4, 512, 1024>
    var database: GATTDatabase<24, 256, 4>
    do {
        peripheral = try HeraldPeripheral(source: source, advertising: advertising, clock: .system())
        database = try GATTDatabase<24, 256, 4>(deviceName: Array(options.deviceName.utf8).span)
        try peripheral.install(into: &database)
    } catch {
        throw CLIError(exitCode: 1, message: "internal error building the \(options.role): \(error)")
    }
    let stack = BluetoothStack(configuration: StackSession<App, 4, 24, 256>.defaultConfiguration(), database: database,
                               app: App(peripheral: peripheral, delegate: printer))
    let session = try controller.openSession(stack)
    defer { session.close() }
    let info = try session.bringUp()
    let identity = PeripheralEventPrinter.address(info.address)
    if options.json {
        let object: [String: Any] = ["event": "ready", "role": options.role, "identityAddress": identity]
        if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
            print(String(decoding: data, as: UTF8.self))
            fflush(nil)
        }
    }
    FileHandle.standardError.write(Data("\(options.role): controller ready (identity \(identity)); advertising the Herald service\n".utf8))
    let stop = SignalFlag.install()
    let deadline = options.duration.map { MonotonicClock.now() + UInt64($0 * 1000) }
    try session.run(deadline: deadline) { s in
        // A supervised session brings a failed controller up again (Hardware Error, Zephyr assert):
        // only an unsupervised one stops here.
        if s.supervision == nil, case .failed(let f) = s.stack.hci.state {
            throw CLIError(exitCode: 4, message: "controller failed: \(ControllerDescriptions.failureDescription(f))")
        }
        return stop.isSet ? .stop : .keepRunning
    }
    try? session.perform { le in le.app.peripheral.advertiser.setAdvertising(false, control: &le.control) }
    FileHandle.standardError.write(Data("\(options.role): \(sink.payloadReads) payload reads, \(sink.signalMessages) signal messages\n".utf8))
}
