import ArgumentParser
import BluetoothHost
import Foundation
import Herald
import HeraldRuntime

struct WearableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wearable",
        abstract: "Be a Herald wearable: advertise, serve the payload, scan, read nearby devices' payloads, log.",
        discussion: """
            Writes contacts.csv, payloads.csv, statistics.csv, detection.csv and log.txt into --log-dir. \
            The Simple payload rotates every 360 s period; the advertising address is a resolvable private \
            address that changes at the same instant. Without --secret-key-file the secret is kept outside \
            the log directory (which people share): one per log directory in $HERALD_KEYS_DIR, else \
            $XDG_DATA_HOME/herald/keys, else ~/.local/share/herald/keys (created on first use, mode 0600).
            On a terminal (without --json) a table of nearby devices is redrawn every second. With --json, \
            `ready` names our payload (its short name) and `ownPayload` each one after it.
            Standard input takes `send HEX [TARGET]`: immediate send to one target (T3) or to every Herald \
            device updated in the last 60 s. SIGINT/SIGTERM stop cleanly and print a summary.
            """
    )

    enum PayloadKind: String, ExpressibleByArgument, CaseIterable {
        case simple, test
    }

    @OptionGroup var controller: ControllerOptions
    @Option(name: .long, help: "simple: the rotating Simple payload; test: a fixed Simple payload, its identifier this device's own (see --test-identifier).")
    var payload: PayloadKind = .simple
    @Option(name: .long, help: "With --payload test: the contact identifier, 32 hex digits (default: derived from --name and --log-dir, so each wearable has its own).")
    var testIdentifier: String?
    @Option(name: .long, help: "Secret key file (2048 bytes, mode 0600) with its IRK beside it in FILE.irk.") var secretKeyFile: String?
    @Option(name: .long, help: "Directory for the logs (never the secret key: see below).")
    var logDir: String = "herald-logs"
    @Option(name: .long, help: "Device name in detection.csv (default: the host name).") var name: String?
    @Option(name: .long, parsing: .unconditional, help: "ISO 3166-1 numeric country code.") var country: Int = 0
    @Option(name: .long, parsing: .unconditional, help: "State code.") var state: Int = 0
    @Option(name: .long, help: "Key schedule epoch, ISO 8601 (default 2026-01-01T00:00:00Z).") var epoch: String?
    @OptionGroup var payloadPeriod: PayloadPeriodOption
    @Option(name: .long, parsing: .unconditional, help: "Advertising interval in milliseconds (20...10240; 100 as the reference wearable).") var intervalMs: Int = 100
    @Flag(name: .long, help: "Advertise and serve the registered 16-bit service UUID 0xFCF6 instead of the 128-bit one.") var registeredUUID = false
    @Flag(name: .long, help: "One JSON object per sensor event (JSON Lines) on standard output.") var json = false
    /// The old spelling, kept working.
    @Flag(name: .customLong("json-events"), help: .hidden) var jsonEventsAlias = false
    var jsonEvents: Bool { json || jsonEventsAlias }
    @Option(name: .long, parsing: .unconditional, help: "Seconds to run (default: until interrupted).") var duration: Double?
    @Option(name: .long, help: ByteOrderChoice.help) var byteOrder: ByteOrderChoice = .spec

    func validate() throws {
        guard (0...0xFFFF).contains(country), (0...0xFFFF).contains(state) else {
            throw ValidationError("--country and --state are 16-bit codes (0...65535)")
        }
        guard (20...10_240).contains(intervalMs) else { throw ValidationError("--interval-ms must be 20...10240") }
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
        if let testIdentifier {
            guard payload == .test else { throw ValidationError("--test-identifier needs --payload test") }
            guard TestPayloadIdentity.parse(testIdentifier) != nil else {
                throw ValidationError("--test-identifier must be 32 hexadecimal digits (16 octets), got \"\(testIdentifier)\"")
            }
        }
    }

    func run() throws {
        try runReportingErrors {
            let keyEpoch: KeyEpoch
            do { keyEpoch = try payloadPeriod.epoch(epoch) } catch { throw CLIError(exitCode: 2, message: CommandMessage.reason(error)) }
            let header = PayloadHeader(protocolAndVersion: 0x10, countryCode: UInt16(country), stateCode: UInt16(state))
            // A key file given on the command line, and the board profiles, are read before anything is
            // written: a truncated or foreign one stops the wearable with nothing created, not even the
            // log directory.
            func load(_ keyPath: String) throws -> ([UInt8], InlineArray<16, UInt8>) {
                do { return (try SecretKeyFile.loadSecretKey(keyPath), try SecretKeyFile.loadIRK(forSecretKey: keyPath)) } catch {
                    throw CLIError(exitCode: 2, message: CommandMessage.reason(error))
                }
            }
            var given: ([UInt8], InlineArray<16, UInt8>)?
            if let secretKeyFile { given = try load(secretKeyFile) }
            try controller.checkBoards()
            // Then the log directory, before a key is made: a key made for a wearable that cannot log
            // would be left behind.
            do { try FileManager.default.createDirectory(atPath: logDir, withIntermediateDirectories: true) } catch {
                throw CLIError(.usage, "\(logDir): cannot create directory (\(CommandMessage.reason(error)))")
            }
            if given == nil {
                let keyPath: String
                do {
                    let keys = WearableSecret.defaultDirectory()
                    let found = try WearableSecret.resolve(logDirectory: logDir, keysDirectory: keys)
                    keyPath = found.path
                    switch found.source {
                    case .created: note("wearable: created secret key \(keyPath)")
                    case .existing: note("wearable: using secret key \(keyPath)")
                    case .legacyInLogDirectory:
                        // Kept working: moving it would change nothing for the user but the surprise.
                        note("wearable: using secret key \(keyPath), inside the log directory where earlier versions put it; "
                             + "anyone you give the logs to gets it too. Move it out: mv \(keyPath) \(keyPath).irk \(keys)/ "
                             + "and pass --secret-key-file \((keys as NSString).appendingPathComponent(WearableSecret.legacyName))")
                    }
                } catch { throw CLIError(.usage, CommandMessage.reason(error)) }
                given = try load(keyPath)
            }
            guard let (secret, irk) = given else { return }
            let advertising = HeraldAdvertisingConfiguration(
                identifiers: registeredUUID ? .registered : .specification, intervalMilliseconds: intervalMs,
                irk: irk, epoch: keyEpoch)
            let clock = HeraldClock.system()
            switch payload {
            case .simple:
                if case .pastHorizon = keyEpoch.horizon(at: Int64(Date().timeIntervalSince1970)) {
                    var why = "the key schedule from epoch \(KeyTools.iso8601(keyEpoch.unixSeconds)) has run out; choose a later --epoch"
                    if keyEpoch.secondsPerPeriod != KeyEpoch.specificationSecondsPerPeriod {
                        // 2,000 days of 240 short periods: 20 s periods last 111 days from the epoch.
                        why += " (with --payload-period \(keyEpoch.secondsPerPeriod) a key schedule day is 240 periods, "
                            + "\(keyEpoch.secondsPerDay) s)"
                    }
                    throw CLIError(exitCode: 2, message: why)
                }
                let supplier: SimplePayloadDataSupplier<InlineSecretKey>
                do { supplier = try SimplePayloadDataSupplier(secretKey: secret.span, header: header, epoch: keyEpoch, order: byteOrder.order) } catch {
                    throw CLIError(exitCode: 2, message: "secret key: \(error)")
                }
                try runWearable(supplier: supplier, advertising: advertising, clock: clock)
            case .test:
                let id = testIdentifier.flatMap(TestPayloadIdentity.parse)
                    ?? TestPayloadIdentity.derived(deviceName: name ?? ProcessInfo.processInfo.hostName, logDirectory: logDir)
                let supplier: FixedPayloadSource<32>
                do { supplier = try .simpleTest(header: header, contactIdentifier: id, order: byteOrder.order) } catch {
                    throw CLIError(exitCode: 1, message: "internal error building the test payload: \(error)")
                }
                try runWearable(supplier: supplier, advertising: advertising, clock: clock)
            }
        }
    }

    func note(_ s: String) { FileHandle.standardError.write(Data((s + "\n").utf8)) }

    /// The sensor with the Herald peripheral on a 5-link stack (3 central links, 2 for centrals
    /// reading us: a third central link shortens a crowd's first reads, `docs/crowd-issue-39.md`;
    /// Zephyr's `hci_uart` controller takes 16), until the duration
    /// passes or SIGINT/SIGTERM. `supplier` is the one provider of our payload: the peripheral serves
    /// it (so it has no source of its own), and the logs name it, both on `clock`.
    func runWearable<Supplier: PayloadDataSupplier>(
        supplier: Supplier, advertising: HeraldAdvertisingConfiguration, clock: HeraldClock
    ) throws {
        typealias Peripheral = HeraldPeripheral<NoPayloadSource, StandardServerOffer, 5, 512, 1024>
        // The sensor's events go to the hub, the peripheral half's to the printer.
        typealias Delegate = SensorDelegatePair<WearableSensorDelegate, PeripheralEventPrinter>
        typealias App = HeraldSensor<Supplier, Delegate, 64, 3, Peripheral>
        var peripheral: Peripheral
        var database: GATTDatabase<24, 256, 5>
        do {
            peripheral = try Peripheral(source: NoPayloadSource(), advertising: advertising, clock: clock)
            database = try GATTDatabase<24, 256, 5>(deviceName: Array("herald".utf8).span)
            try peripheral.install(into: &database)
        } catch {
            throw CLIError(exitCode: 1, message: "internal error building the wearable: \(error)")
        }
        // Our payload now, for detection.csv (and to leave ourselves out of the peer lists).
        var own = FixedBytes<128>()
        var s = supplier
        _ = s.writePayload(at: clock.unixSeconds(now: MonotonicClock.now()), to: &own)
        let ownBytes = WearableEventHub.bytes(own.span)
        let logs: LogDirectory
        do {
            var configuration = LogDirectory.Configuration(ownPayload: ownBytes)
            if let name { configuration.deviceName = name }
            logs = try LogDirectory(path: logDir, configuration: configuration)
        } catch { throw CLIError(exitCode: 2, message: CommandMessage.reason(error)) }
        let live = !jsonEvents && isatty(STDOUT_FILENO) != 0
        let hub = WearableEventHub(json: jsonEvents, consumer: logs)
        hub.order = byteOrder.order
        // The peripheral's own events (connections, payload reads, signal writes, address changes):
        // JSON lines beside the sensor events, or log.txt entries.
        let peripheralSink = PeripheralEventSink(write: jsonEvents ? hub.write : { line in
            logs.log(.info, category: "Peripheral", line)
        })
        peripheralSink.served = { payload in logs.recordServed(payload) }
        var observer = PeripheralEventPrinter(json: jsonEvents, sink: peripheralSink)
        observer.order = byteOrder.order
        logs.log(.info, category: "Wearable", "started; \(DeviceLogReader.ownPayloadMarker)\(payloadShortName(ownBytes))")

        // Payloads are read again once a period old (one 360 s period, or the shortened test period).
        var sensorConfiguration = HeraldSensorConfiguration()
        sensorConfiguration.payloadUpdateInterval = UInt64(advertising.epoch.secondsPerPeriod) * 1000
        let stack = BluetoothStack(configuration: StackSession<App, 5, 24, 256>.defaultConfiguration(), database: database,
                                   app: App(supplier: supplier, delegate: Delegate(WearableSensorDelegate(hub: hub), observer),
                                             peripheral: peripheral,
                                             configuration: sensorConfiguration))
        let session = try controller.openSession(stack)
        defer { session.close() }
        try session.perform { le in
            // Each device's own random delays (HeraldCentral+Crowd), not only its address's.
            le.app.central.stir(UInt64.random(in: 0...UInt64.max))
            le.app.start(now: MonotonicClock.now(), control: &le.control)
        }
        let info = try session.bringUp()
        let identity = PeripheralEventPrinter.address(info.address)
        if jsonEvents {
            hub.write("{\"event\":\"ready\",\"identityAddress\":\"\(identity)\",\"payload\":\"\(payloadShortName(ownBytes))\",\"role\":\"wearable\"}")
        }
        note("wearable: controller ready (identity \(identity)); advertising, scanning, logging to \(logDir)")
        let console = ConsoleInput()
        console.start()
        let stop = SignalFlag.install()
        let deadline = duration.map { MonotonicClock.now() + UInt64($0 * 1000) }
        var nextDraw: UInt64 = 0
        // The Simple payload changes every 360 s: log.txt records each one, so `herald analyse` can tell
        // the other devices' readings of any of them are readings of this wearable (DeviceLogReader).
        // One supplier for the checks, so its matching key (up to 2,000 hashes down the day chain) is derived once a day,
        // not on every check: derived each second it was 5 % of a crowd wearable's CPU.
        var ownName = payloadShortName(ownBytes), nextOwnCheck: UInt64 = 0, ownSupplier = supplier
        try session.run(deadline: deadline) { s in
            if s.supervision == nil, case .failed(let f) = s.stack.hci.state {  // supervised: brought up again
                throw CLIError(exitCode: 4, message: "controller failed: \(ControllerDescriptions.failureDescription(f))")
            }
            for line in console.take() { try? handle(line, session: s) }
            let now = MonotonicClock.now()
            if now >= nextOwnCheck {
                nextOwnCheck = now + 1000
                var current = FixedBytes<128>()
                _ = ownSupplier.writePayload(at: clock.unixSeconds(now: now), to: &current)
                let name = payloadShortName(WearableEventHub.bytes(current.span))
                if name != ownName, !name.isEmpty {
                    ownName = name
                    logs.log(.info, category: "Wearable", "\(DeviceLogReader.ownPayloadMarker)\(name) from now on")
                    // With --json-events too: a reader following this wearable by its short name (as its
                    // peers see it: a new payload and a new address, so a new target) learns the new one.
                    if jsonEvents { hub.write("{\"event\":\"ownPayload\",\"payload\":\"\(name)\"}") }
                }
            }
            if live, now >= nextDraw {
                nextDraw = now + 1000
                updateKinds(hub, s.app.central.database)
                WearableEventHub.standardOutput("\u{1B}[H\u{1B}[2J" + "herald wearable — \(hub.summary)\n" + hub.table())
            }
            return stop.isSet ? .stop : .keepRunning
        }
        // Stop advertising and scanning, then close every link, ours and our centrals'.
        try? session.perform { le in
            le.app.stop(control: &le.control)
            le.app.peripheral.advertiser.setAdvertising(false, control: &le.control)
        }
        session.releaseLinks()
        logs.log(.info, category: "Wearable", "stopped; \(hub.summary)")
        do { try logs.close() } catch { note("wearable: closing logs: \(error)") }
        note("wearable: \(hub.summary); served our payload \(peripheralSink.payloadReads) times, \(peripheralSink.signalMessages) signal messages")
    }

    func updateKinds<let n: Int>(_ hub: WearableEventHub, _ db: HeraldDeviceDatabase<n>) {
        for i in 0..<n {
            guard let d = db[i] else { continue }
            var payload: [UInt8] = []
            if d.hasPayload { payload = WearableEventHub.bytes(d.payload.span) }
            hub.setDevice(kind: DeviceKind.of(sensor: d.kind, os: d.os, hasHeraldService: d.hasHeraldService,
                                              pseudoAddress: d.pseudoAddress != nil, payload: payload),
                          address: d.address.address.description, for: d.target.value)
        }
    }

    func handle<Sp: PayloadDataSupplier, P: HeraldSensorPeripheral>(
        _ line: String, session: StackSession<HeraldSensor<Sp, SensorDelegatePair<WearableSensorDelegate, PeripheralEventPrinter>, 64, 3, P>, 5, 24, 256>) throws {
        do {
            guard case .send(let data, let target)? = try WearableConsoleCommand.parse(line) else { return }
            let now = MonotonicClock.now()
            let result: String = try session.perform { le in
                if let target {
                    return le.app.immediateSend(data.span, to: TargetIdentifier(target), now: now, control: &le.control)
                        ? "send: queued \(data.count) bytes for T\(target)" : "send: T\(target) is not a known Herald device"
                }
                let n = le.app.immediateSendAll(data.span, now: now, control: &le.control)
                return "send: queued \(data.count) bytes for \(n) devices"
            }
            note(result)
        } catch {
            note("\(error)")
        }
    }
}

/// What the peripheral roles (wearable, beacon) share on the command line.
struct PeripheralRunOptions {
    var role: String
    var deviceName: String
    var json: Bool
    var duration: Double?
    /// How signal-written payloads are decoded in events (`--byte-order`).
    var byteOrder: PayloadCodeByteOrder = .bigEndian
    /// The payload served, when it is fixed (a beacon's): shown decoded with `byteOrder` at start.
    var servedPayload: [UInt8]? = nil
}

/// Runs a Herald peripheral on the controller until the duration passes or SIGINT/SIGTERM.
func runHeraldPeripheral<Source: HeraldPayloadSource>(
    source: Source, advertising: HeraldAdvertisingConfiguration, controller: ControllerOptions, options: PeripheralRunOptions
) throws {
    typealias App = HeraldPeripheralApplication<Source, PeripheralEventPrinter, 4, 512, 1024, StandardServerOffer>
    let sink = PeripheralEventSink()
    var printer = PeripheralEventPrinter(json: options.json, sink: sink)
    printer.order = options.byteOrder
    var peripheral: HeraldPeripheral<Source, StandardServerOffer, 4, 512, 1024>
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
        var object: [String: Any] = ["event": "ready", "role": options.role, "identityAddress": identity]
        if let served = options.servedPayload {
            object["payload"] = WearableEventHub.hexString(served)
            object["decoded"] = PayloadDescription.text(served, order: options.byteOrder)
        }
        if let line = JSONLine.encode(object) {
            print(line)
            fflush(nil)
        }
    }
    let serving = options.servedPayload.map {
        ", serving \(PayloadDescription.text($0, order: options.byteOrder)) (--byte-order \(options.byteOrder.optionName))"
    } ?? ""
    FileHandle.standardError.write(Data("\(options.role): controller ready (identity \(identity)); advertising the Herald service\(serving)\n".utf8))
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
    session.releaseLinks()
    FileHandle.standardError.write(Data("\(options.role): \(sink.payloadReads) payload reads, \(sink.signalMessages) signal messages\n".utf8))
}
