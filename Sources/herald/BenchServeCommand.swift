import ArgumentParser
import BluetoothHost
import Foundation
import HeraldRuntime

/// `herald bench-serve`: the GATT server Tools/bench-uart measures (see `BenchServer`).
struct BenchServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-serve",
        abstract: "Serve the test profile's long value and stream notifications as fast as the link allows (for Tools/bench-uart).",
        discussion: "Prints 'advertising address=ADDRESS' once ready. Each subscription gets --notify-count notifications of --notify-size octets (0: ATT_MTU - 3).",
        // Internal: Tools/bench-uart runs it; `herald --help` does not list it.
        shouldDisplay: false
    )

    @OptionGroup var controller: ControllerOptions
    @Option(name: .long, help: "Device name (advertised and in the GAP service).") var name = "herald-bench"
    @Option(name: .customLong("notify-count"), help: "Notifications per subscription.") var notifyCount = 1000
    @Option(name: .customLong("notify-size"), help: "Octets per notification; 0 fills the ATT_MTU.") var notifySize = 0
    @Option(name: .long, parsing: .unconditional, help: "Seconds to serve (default: until interrupted).") var duration: Double?

    func validate() throws {
        guard notifyCount >= 0 else { throw ValidationError("--notify-count must not be negative") }
        guard (0...244).contains(notifySize) else { throw ValidationError("--notify-size must be 0 to 244") }
    }

    func run() throws {
        try runReportingErrors {
            let stack: BenchServerStack
            do {
                stack = try BenchServer.makeStack(name: name, count: notifyCount, size: notifySize,
                                                  configuration: StackSession<BenchServer, 2, 24, 512>.defaultConfiguration())
            } catch {
                throw CLIError(exitCode: 1, message: "internal error building the GATT database: \(error)")
            }
            let session = try controller.openSession(stack)
            defer { session.close() }
            let stop = SignalFlag.install()
            _ = try session.bringUp()
            var announced = false
            let deadline = duration.map { MonotonicClock.now() + UInt64($0 * 1000) }
            try session.run(deadline: deadline) { s in
                if s.supervision == nil, case .failed(let f) = s.stack.hci.state {  // supervised: brought up again
                    throw CLIError(exitCode: 4, message: "controller failed: \(ControllerDescriptions.failureDescription(f))")
                }
                try s.perform { BenchServer.pump(&$0, now: MonotonicClock.now()) }
                if !announced, let a = s.app.address {
                    print("advertising address=\(a)")
                    fflush(nil)
                    announced = true
                }
                return stop.isSet ? .stop : .keepRunning
            }
            try? session.perform { $0.control.stopAdvertising() }
            session.releaseLinks()
        }
    }
}
