import ArgumentParser
import BluetoothHost
import Foundation
import Herald
import HeraldRuntime

struct SenseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sense",
        abstract: "Run the Herald sensor's central role: scan, connect to Herald devices, read their payloads.",
        discussion: """
            Receive-only for now: nothing is advertised or served (combine with the wearable's peripheral \
            in firmware or a later command). Each event is printed as it happens.
            """
    )

    @OptionGroup var controller: ControllerOptions
    @Option(name: .long, help: "Seconds to run (default: until interrupted).") var duration: Double?
    @Flag(name: .long, help: "One JSON object per event (JSON Lines) on standard output.") var jsonEvents = false
    @Flag(name: .long, help: "Leave out the per-advert RSSI measurements.") var quiet = false

    func validate() throws {
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
    }

    func run() throws {
        try runReportingErrors {
            typealias App = SensorArray<SimplePayloadLayout, SensorEventPrinter, 64, 2, NoSensorPeripheral>
            let printer = SensorEventPrinter(json: jsonEvents, measurements: !quiet)
            let stack = BluetoothStack(configuration: StackSession<App, 4, 16, 128>.defaultConfiguration(),
                                       database: try minimalDatabase(), app: App(supplier: SimplePayloadLayout(), delegate: printer))
            let session = try controller.openSession(stack)
            defer { session.close() }
            let started = MonotonicClock.now()
            try session.perform { le in le.app.start(now: started, control: &le.control) }
            _ = try session.bringUp()
            let stop = SignalFlag.install()
            let deadline = duration.map { MonotonicClock.now() + UInt64($0 * 1000) }
            try session.run(deadline: deadline) { s in
                if case .failed(let f) = s.stack.hci.state {
                    throw CLIError(exitCode: 4, message: "controller failed: \(ControllerDescriptions.failureDescription(f))")
                }
                return stop.isSet ? .stop : .keepRunning
            }
            try? session.perform { le in le.app.stop(control: &le.control) }
            FileHandle.standardError.write(Data("sense: \(session.app.ble.central.database.count) devices known\n".utf8))
        }
    }
}
