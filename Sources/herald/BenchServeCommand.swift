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
    @Option(name: .long, help: "PHY links are moved to: 2m (where both controllers have it) or 1m.") var phy = "2m"
    @Option(name: .customLong("data-length"), help: "LL data length asked for each link: 27 (no Data Length Update) to 251.") var dataLength = 251
    @Option(name: .long, help: "Connection interval asked of the central once a client subscribes, in 1.25 ms units (6...3200); 0 keeps the central's.") var interval = 6

    func validate() throws {
        guard notifyCount >= 0 else { throw ValidationError("--notify-count must not be negative") }
        guard (0...244).contains(notifySize) else { throw ValidationError("--notify-size must be 0 to 244") }
        guard phy == "1m" || phy == "2m" else { throw ValidationError("--phy must be 1m or 2m, not '\(phy)'") }
        guard (27...251).contains(dataLength) else { throw ValidationError("--data-length must be 27 to 251") }
        guard interval == 0 || (6...3200).contains(interval) else { throw ValidationError("--interval must be 0 or 6 to 3200") }
    }

    func run() throws {
        try runReportingErrors {
            var stack: BenchServerStack
            do {
                var configuration = StackSession<BenchServer, 2, 24, 512>.defaultConfiguration()
                configuration.prefers2MPHY = phy == "2m"
                // LE 1M time for the octets (Core 5.4 Vol 6 Part B 4.5.10): (octets + 14) × 8 µs.
                let time = UInt16((dataLength + 14) * 8)
                configuration.suggestedDataLength = (UInt16(dataLength), time)
                stack = try BenchServer.makeStack(name: name, count: notifyCount, size: notifySize, configuration: configuration)
                stack.le.requestedLinkDataLength = (UInt16(dataLength), time)
                stack.app.interval = UInt16(interval)
                stack.app.waitsForPHY = phy == "2m"
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
