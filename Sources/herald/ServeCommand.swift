import ArgumentParser
import BluetoothHost
import Foundation
import HeraldRuntime

struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Advertise connectably and serve a GATT database; print what clients do.",
        discussion: """
        The test profile: a 128-bit service with a 200-octet readable value, a writable characteristic \
        (Write and Write Without Response, up to 512 octets; every write is reported in hex), a notifying and an \
        indicating characteristic that send --notify-count counter values once subscribed, and Battery (0x180F). \
        Advertising resumes after each connection, so several centrals can connect.
        """
    )

    @OptionGroup var controller: ControllerOptions
    @Option(name: .long, help: "GATT profile to serve (only 'test' so far).") var profile = "test"
    @Option(name: .long, help: "Device name (advertised and in the GAP service).") var name = "herald-test"
    @Option(name: .customLong("notify-count"), help: "Values sent on each subscription to the notifying/indicating characteristics.")
    var notifyCount = 10
    @Option(name: .long, parsing: .unconditional, help: "Seconds to serve (default: until interrupted).") var duration: Double?
    @Flag(name: .long, help: "One JSON object per event (JSON Lines).") var json = false
    /// The old spelling, kept working.
    @Flag(name: .customLong("json-events"), help: .hidden) var jsonEventsAlias = false
    var jsonEvents: Bool { json || jsonEventsAlias }

    func validate() throws {
        guard profile == "test" else { throw ValidationError("unknown profile '\(profile)'; known: test") }
        guard notifyCount >= 0 else { throw ValidationError("--notify-count must not be negative") }
        guard !name.isEmpty, name.utf8.count <= 32 else { throw ValidationError("--name must be 1 to 32 octets") }
    }

    func run() throws {
        try runReportingErrors {
            let stack: TestServerStack
            do {
                stack = try TestServer.makeStack(name: name, count: notifyCount,
                                                 configuration: StackSession<TestServer, 8, 40, 1024>.defaultConfiguration(),
                                                 now: MonotonicClock.now())
            } catch {
                throw CLIError(exitCode: 1, message: "internal error building the GATT database: \(error)")
            }
            let session = try controller.openSession(stack)
            defer { session.close() }
            let stop = SignalFlag.install()
            _ = try session.bringUp()
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let json = jsonEvents
            func emit(_ s: StackSession<TestServer, 8, 40, 1024>) {
                for e in s.app.takeEvents() {
                    if json, let data = try? encoder.encode(e) {
                        print(String(decoding: data, as: UTF8.self))
                    } else {
                        print(e.line)
                    }
                }
                fflush(nil)
            }
            let h = session.app.handles
            FileHandle.standardError.write(Data(
                "serve: handles long=0x\(hex(h.longValue)) write=0x\(hex(h.writable)) notify=0x\(hex(h.notifying)) indicate=0x\(hex(h.indicating)) battery=0x\(hex(h.battery))\n".utf8))
            let deadline = duration.map { MonotonicClock.now() + UInt64($0 * 1000) }
            try session.run(deadline: deadline) { s in
                // Supervised: a failed controller is brought up again rather than ending the role.
                if s.supervision == nil, case .failed(let f) = s.stack.hci.state {
                    emit(s)
                    throw CLIError(exitCode: 4, message: "controller failed: \(ControllerDescriptions.failureDescription(f))")
                }
                try s.perform { TestServer.pump(&$0, now: MonotonicClock.now()) }
                emit(s)
                return stop.isSet ? .stop : .keepRunning
            }
            try? session.perform { $0.control.stopAdvertising() }
            session.releaseLinks()
            emit(session)
        }
    }
}
