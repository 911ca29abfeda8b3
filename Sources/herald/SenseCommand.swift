import ArgumentParser
import BluetoothHost
import Foundation
import Herald
import HeraldRuntime

struct SenseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sense",
        abstract: "Run the Herald sensor: scan, connect to Herald devices, read their payloads; optionally advertise too.",
        discussion: """
            Without --test-payload the sensor is receive-only: nothing is advertised or served. With it, the \
            sensor also runs the Herald peripheral (service, payload, signal characteristic) serving a fixed \
            test Simple payload, so two sensors read each other. Each event is printed as it happens.
            """
    )

    @OptionGroup var controller: ControllerOptions
    @Option(name: .long, parsing: .unconditional, help: "Seconds to run (default: until interrupted).") var duration: Double?
    @Flag(name: .long, help: "One JSON object per event (JSON Lines) on standard output.") var json = false
    /// The old spelling, kept working.
    @Flag(name: .customLong("json-events"), help: .hidden) var jsonEventsAlias = false
    var jsonEvents: Bool { json || jsonEventsAlias }
    @Flag(name: .long, help: "Leave out the per-advert RSSI measurements.") var quiet = false
    @Option(name: .long, parsing: .unconditional, help: "Also advertise and serve a fixed test Simple payload whose identifier is 16 × BYTE (0-255).")
    var testPayload: Int?
    @Option(name: .long, help: ByteOrderChoice.help) var byteOrder: ByteOrderChoice = .spec

    func validate() throws {
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
        if let testPayload, !(0...255).contains(testPayload) { throw ValidationError("--test-payload is one byte (0...255)") }
    }

    func run() throws {
        try runReportingErrors {
            var printer = SensorEventPrinter(json: jsonEvents, measurements: !quiet)
            printer.order = byteOrder.order
            guard let byte = testPayload else {
                try runSensor(supplier: SimplePayloadLayout(), peripheral: NoSensorPeripheral(), database: try Self.database(),
                              printer: printer)
                return
            }
            let header = PayloadHeader(protocolAndVersion: 0x10, countryCode: 0, stateCode: 0)
            let identifier = ContactIdentifier(repeating: UInt8(byte))
            // The test payload is the sensor's supplier; the peripheral serves it (no source of its own).
            let supplier: FixedPayloadSource<32>
            var peripheral: HeraldPeripheral<NoPayloadSource, StandardServerOffer, 4, 32, 600>
            var database = try Self.database()
            do {
                supplier = try .simpleTest(header: header, contactIdentifier: identifier, order: byteOrder.order)
                peripheral = try HeraldPeripheral(source: NoPayloadSource(), advertising: HeraldAdvertisingConfiguration(), clock: .system())
                try peripheral.install(into: &database)
            } catch {
                throw CLIError(exitCode: 1, message: "internal error building the peripheral: \(error)")
            }
            try runSensor(supplier: supplier, peripheral: peripheral, database: database, printer: printer)
        }
    }

    /// GAP plus room for the Herald service, for 4 links (2 central, the rest for centrals reading us).
    static func database() throws -> GATTDatabase<24, 256, 4> {
        let name: [UInt8] = Array("herald".utf8)
        do { return try GATTDatabase<24, 256, 4>(deviceName: name.span) } catch {
            throw CLIError(exitCode: 1, message: "internal error building the GATT database: \(error)")
        }
    }

    func runSensor<S: PayloadDataSupplier, P: HeraldSensorPeripheral>(supplier: S, peripheral: P, database: GATTDatabase<24, 256, 4>,
                                                                    printer: SensorEventPrinter) throws
        where P.Offer.GATTHandles == AnyGATTHandles {
        typealias App = HeraldSensor<S, SensorEventPrinter, 64, 2, P>
        let stack = BluetoothStack(configuration: StackSession<App, 4, 24, 256>.defaultConfiguration(), database: database,
                                   app: App(supplier: supplier, delegate: printer, peripheral: peripheral))
        let session = try controller.openSession(stack)
        defer { session.close() }
        let started = MonotonicClock.now()
        try session.perform { le in
            // Each device's own random delays (HeraldCentral+Crowd), not only its address's.
            le.app.central.stir(UInt64.random(in: 0...UInt64.max))
            le.app.start(now: started, control: &le.control)
        }
        _ = try session.bringUp()
        let stop = SignalFlag.install()
        let deadline = duration.map { MonotonicClock.now() + UInt64($0 * 1000) }
        try session.run(deadline: deadline) { s in
            // Supervised: a failed controller is brought up again rather than ending the role.
            if s.supervision == nil, case .failed(let f) = s.stack.hci.state {
                throw CLIError(exitCode: 4, message: "controller failed: \(ControllerDescriptions.failureDescription(f))")
            }
            return stop.isSet ? .stop : .keepRunning
        }
        try? session.perform { le in le.app.stop(control: &le.control) }
        session.releaseLinks()
        FileHandle.standardError.write(Data("sense: \(session.app.central.database.count) devices known\n".utf8))
    }
}
