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
    @Option(name: .long, help: "GATT profile to serve: 'test', or 'edtt' (the SIG's GATT test databases for EDTT, with --edtt-relay).") var profile = "test"
    @Option(name: .customLong("edtt-relay"), help: "Profile edtt: the Unix socket of EDTT's DUT relay (conformance fixture bin/edtt_dut_relay.py).")
    var edttRelay: String?
    @Option(name: .long, help: "Device name (advertised and in the GAP service).") var name = "herald-test"
    @Option(name: .customLong("notify-count"), help: "Values sent on each subscription to the notifying/indicating characteristics.")
    var notifyCount = 10
    @Option(name: .long, parsing: .unconditional, help: "Seconds to serve (default: until interrupted).") var duration: Double?
    @Flag(name: .long, help: "One JSON object per event (JSON Lines).") var json = false
    /// The old spelling, kept working.
    @Flag(name: .customLong("json-events"), help: .hidden) var jsonEventsAlias = false
    var jsonEvents: Bool { json || jsonEventsAlias }

    func validate() throws {
        guard profile == "test" || profile == "edtt" else { throw ValidationError("unknown profile '\(profile)'; known: test, edtt") }
        guard (profile == "edtt") == (edttRelay != nil) else {
            throw ValidationError(profile == "edtt" ? "--profile edtt needs --edtt-relay SOCKET" : "--edtt-relay is for --profile edtt")
        }
        guard notifyCount >= 0 else { throw ValidationError("--notify-count must not be negative") }
        guard !name.isEmpty, name.utf8.count <= 32 else { throw ValidationError("--name must be 1 to 32 octets") }
    }

    func run() throws {
        if let edttRelay {
            try runReportingErrors { try serveEDTT(relayPath: edttRelay) }
            return
        }
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

    /// `--profile edtt`: EDTT's DUT (EDTTServer). Runs until the controller's pty closes (the
    /// simulation ended) or the relay does; the pty closing is the normal end, exit status 0.
    func serveEDTT(relayPath: String) throws {
        let stack: EDTTServerStack
        do {
            stack = try EDTTServer.makeStack(configuration: StackSession<EDTTServer, 8, 0, 64>.defaultConfiguration())
        } catch {
            throw CLIError(exitCode: 1, message: "internal error: an EDTT GATT table is invalid: \(error)")
        }
        let session = try controller.openSession(stack)
        // The pty's end is the end of the run, not a controller to reopen.
        session.supervision = nil
        defer { session.close() }
        let stop = SignalFlag.install()
        // The simulated controller only runs once EDTT has started and lets simulated time pass
        // (the fixture's README), which on a loaded machine can take longer than one bring-up
        // (15 resets): try again, up to about 4 minutes. A pty that closes meanwhile ends the run.
        for attempt in 1... {
            do {
                _ = try session.bringUp()
                break
            } catch let e as CLIError where e.exitCode == 3 && attempt < 8 {
                FileHandle.standardError.write(Data("herald serve: \(e.message); trying again (\(attempt))\n".utf8))
            }
        }
        let relay: EDTTRelay
        do { relay = try EDTTRelay(path: relayPath) } catch {
            throw CLIError(exitCode: 2, message: "\(error)")
        }
        func emit(_ s: StackSession<EDTTServer, 8, 0, 64>) {
            for line in s.app.takeLog() { print(line) }
            fflush(nil)
        }
        var ready = false
        var relayClosed = false
        do {
            try session.run { s in
                if !ready, s.app.address != nil {
                    relay.send("READY")
                    ready = true
                }
                for command in ready ? relay.poll() : [] {
                    switch command {
                    case .set(let n): try s.perform { EDTTServer.switchSet(n, &$0) }
                    case .notify: try s.perform { EDTTServer.sendValueV6(indicate: false, &$0) }
                    case .indicate: try s.perform { EDTTServer.sendValueV6(indicate: true, &$0) }
                    case .unknown(let line): s.app.note("relay: unknown command '\(line)'")
                    case .closed: relayClosed = true
                    }
                    if command != .closed { relay.send("OK") }
                }
                emit(s)
                return stop.isSet || relayClosed ? .stop : .keepRunning
            }
        } catch let e as TransportError where e.isDisconnection {
            emit(session)
            print("controller closed: \(e)")
            return
        }
        emit(session)
    }
}
