import ArgumentParser
import BluetoothHost
import Foundation
import HeraldRuntime

/// `herald bench-write`: the GATT client Tools/bench-uart --direction write measures (see `BenchWriter`).
struct BenchWriteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-write",
        abstract: "Connect to a peripheral and send Write Commands as fast as the link allows (for Tools/bench-uart).",
        discussion: "Prints 'sent N' once every Write Command is queued, then stays connected for --linger seconds.",
        // Internal: Tools/bench-uart runs it; `herald --help` does not list it.
        shouldDisplay: false
    )

    @OptionGroup var controller: ControllerOptions
    @Option(name: .long, help: "The peripheral's address: AA:BB:CC:DD:EE:FF[/random|/public].") var connect: String
    @Option(name: .long, help: "The characteristic value handle written to.") var attribute: UInt16
    @Option(name: .long, help: "Write Commands to send.") var count = 1000
    @Option(name: .long, help: "Octets per Write Command; 0 fills the ATT_MTU.") var size = 0
    @Option(name: .long, help: "PHY links are moved to: 2m (where both controllers have it; the first write waits up to 2 s for the PHY Update) or 1m.") var phy = "2m"
    @Option(name: .customLong("data-length"), help: "LL data length asked for the link: 27 to 251.") var dataLength = 251
    @Option(name: .long, help: "Connection interval to connect with, in 1.25 ms units (6...3200).") var interval = 6
    @Option(name: .long, parsing: .unconditional, help: "Seconds to stay connected after the last write is queued.") var linger: Double = 5

    func validate() throws {
        guard GATTCommand.parseAddress(connect) != nil else {
            throw ValidationError("--connect: expected AA:BB:CC:DD:EE:FF[/random|/public], got '\(connect)'")
        }
        guard count >= 0, (0...244).contains(size) else { throw ValidationError("--count must not be negative, --size 0 to 244") }
        guard phy == "1m" || phy == "2m" else { throw ValidationError("--phy must be 1m or 2m, not '\(phy)'") }
        guard (27...251).contains(dataLength) else { throw ValidationError("--data-length must be 27 to 251") }
        guard (6...3200).contains(interval) else { throw ValidationError("--interval must be 6 to 3200") }
    }

    func run() throws {
        try runReportingErrors {
            guard let peer = GATTCommand.parseAddress(connect) else { throw CLIError(exitCode: 2, message: "bad address") }
            var configuration = StackSession<BenchWriter, 1, 16, 128>.defaultConfiguration()
            configuration.prefers2MPHY = phy == "2m"
            let time = UInt16((dataLength + 14) * 8)  // LE 1M time for the octets (Core 5.4 Vol 6 Part B 4.5.10)
            configuration.suggestedDataLength = (UInt16(dataLength), time)
            var app = BenchWriter(peer: peer, attribute: attribute, count: count, size: size)
            app.interval = UInt16(interval)
            app.waitsForPHY = phy == "2m"
            var stack = BluetoothStack(configuration: configuration, database: try minimalDatabase(), app: app)
            stack.le.requestedLinkDataLength = (UInt16(dataLength), time)
            let session = try controller.openSession(stack)
            defer { session.close() }
            let stop = SignalFlag.install()
            _ = try session.bringUp()
            var sentAt: UInt64?
            try session.run(deadline: MonotonicClock.now() + 300_000) { s in
                if case .failed(let f) = s.stack.hci.state {
                    throw CLIError(exitCode: 4, message: "controller failed: \(ControllerDescriptions.failureDescription(f))")
                }
                try s.perform { BenchWriter.pump(&$0) }
                switch s.app.state {
                case .failed(let why): throw CLIError(exitCode: 6, message: why)
                case .sent:
                    let now = MonotonicClock.now()
                    if sentAt == nil {
                        sentAt = now
                        print("sent \(s.app.written) mtu=\(s.app.mtu)")
                        fflush(nil)
                    }
                    if now > sentAt! + UInt64(linger * 1000) { return .stop }
                default: break
                }
                return stop.isSet ? .stop : .keepRunning
            }
            session.releaseLinks()
        }
    }
}
