import ArgumentParser
import BluetoothHost
import Foundation
import HeraldRuntime

/// Options shared by every command that talks to a controller.
struct ControllerOptions: ParsableArguments {
    @Option(name: .long, help: "serial:PATH[,baud=N][,flow=rtscts|none] | tty:PATH[,...] | tcp:HOST:PORT | a bare path. Default: the one attached board found by USB VID:PID.")
    var transport: String?

    @Option(name: .long, help: "Board profile from Boards/ (e.g. nrf52840dongle): transport defaults and USB IDs.")
    var board: String?

    @Option(name: .long, help: "Write a btsnoop capture (H4, both directions) to this file.")
    var btsnoop: String?

    @Flag(name: .long, help: "At exit, print the runtime's counters (framer, ACL credits, connections, restarts) as one JSON line on standard error.")
    var stats = false

    @Option(name: .long, parsing: .unconditional, help: "With --stats, also print the counters every SECONDS while running.")
    var statsInterval: Double?

    /// Opens the transport and the capture and builds a session around `stack`. Errors become
    /// exit status 2: a port that does not exist, a bad spec, an unwritable capture.
    func openSession<App: LEApplication, let L: Int, let A: Int, let V: Int>(
        _ stack: BluetoothStack<App, L, A, V>
    ) throws -> StackSession<App, L, A, V> {
        let (link, snoop, spec) = try openLink()
        let session = StackSession(transport: link, snoop: snoop, stack: stack)
        session.reportsStatisticsAtClose = stats
        if stats, let statsInterval, statsInterval > 0 { session.statisticsInterval = UInt64(statsInterval * 1000) }
        // Long-running roles survive a failed controller and an unplugged dongle; short commands
        // (info, gatt) stop at the first failure instead, so they clear this.
        session.supervision = .init(reopen: { () throws(TransportError) -> HCITransport in try openTransport(spec) },
                                    log: { FileHandle.standardError.write(Data("herald: \($0)\n".utf8)) })
        return session
    }

    func openLink() throws -> (HCITransport, BTSnoopWriter?, TransportSpec) {
        let profile = try selectedBoard()
        let spec: TransportSpec
        if let transport {
            do {
                let parsed = try TransportSpec.parse(transport)
                if let d = profile?.transportDefaults() { spec = parsed.filling(baud: d.baud, flow: d.flow) } else { spec = parsed }
            } catch {
                throw CLIError(exitCode: 2, message: CommandMessage.reason(error))
            }
        } else {
            do {
                let boards = try autodetectBoards()
                let found = try autodetectTransport(boards: boards, board: profile)
                FileHandle.standardError.write(Data("using \(found.description)\n".utf8))
                spec = found.0
            } catch {
                throw CLIError(exitCode: 2, message: CommandMessage.reason(error))
            }
        }
        let link: HCITransport
        do { link = try openTransport(spec) } catch {
            throw CLIError(exitCode: 2, message: CommandMessage.reason(error))
        }
        var snoop: BTSnoopWriter?
        if let btsnoop {
            do { snoop = try BTSnoopWriter(path: btsnoop) } catch {
                link.close()
                throw CLIError(exitCode: 2, message: CommandMessage.reason(error))
            }
        }
        return (link, snoop, spec)
    }

    /// Reads the board profiles the transport will need (`--board`, or those autodetection matches
    /// against) before a command writes anything: a broken profile stops it with nothing created.
    func checkBoards() throws {
        _ = try selectedBoard()
        if transport == nil { _ = try autodetectBoards() }
    }

    /// The profiles autodetection matches USB IDs against. Without a board directory there is nothing
    /// to match; a broken profile in it is an error, not a board silently left unrecognised ("no
    /// board found").
    private func autodetectBoards() throws -> [BoardProfile] {
        let directory = BoardProfile.defaultDirectory()
        guard FileManager.default.fileExists(atPath: directory.path) else { return [] }
        do { return try BoardProfile.loadAll(from: directory) } catch {
            throw CLIError(exitCode: 2, message: "cannot read board profiles: \(error)")
        }
    }

    private func selectedBoard() throws -> BoardProfile? {
        guard let board else { return nil }
        let all: [BoardProfile]
        do { all = try BoardProfile.loadAll(from: BoardProfile.defaultDirectory()) } catch {
            throw CLIError(exitCode: 2, message: "cannot read board profiles: \(error)")
        }
        guard let p = all.first(where: { $0.name == board }) else {
            throw CLIError(exitCode: 2, message: "unknown board '\(board)'; known boards: \(all.map(\.name).sorted().joined(separator: ", "))")
        }
        return p
    }
}

/// An error that ends the command with a message on standard error and a status from `ExitStatus`.
struct CLIError: Error, CustomStringConvertible {
    var exitCode: Int32
    var message: String
    var description: String { message }

    init(exitCode: Int32, message: String) {
        self.exitCode = exitCode
        self.message = message
    }

    init(_ status: ExitStatus, _ message: String) {
        self.init(exitCode: status.rawValue, message: message)
    }
}

extension StackSession {
    /// Brings the controller up; exit status 3 when it never answers or fails.
    /// Brings the controller up once, without supervision: a command that only needs one answer
    /// reports a failure instead of retrying.
    func bringUp(limit: UInt64 = 15_000) throws -> ControllerInfo {
        let supervisor = supervision
        supervision = nil
        defer { supervision = supervisor }
        try start()
        try run(deadline: MonotonicClock.now() + limit) { s in
            switch s.stack.hci.state {
            case .ready, .failed: return .stop
            default: return .keepRunning
            }
        }
        switch stack.hci.state {
        case .ready:
            return stack.hci.info
        case .failed(.noResponse(let resets)):
            throw CLIError(exitCode: 3, message: "no HCI response on \(transport.name) after \(resets) resets; is it running the hci_uart image?")
        case .failed(let f):
            throw CLIError(exitCode: 3, message: "controller on \(transport.name) failed during bring-up: \(ControllerDescriptions.failureDescription(f))")
        default:
            throw CLIError(exitCode: 3, message: "controller on \(transport.name) did not finish bring-up in \(limit / 1000) s")
        }
    }
}

/// An application that does nothing: for commands that only need the controller.
struct NoApplication: LEApplication {}

/// The smallest GATT database (GAP and GATT services only), for commands that serve nothing.
func minimalDatabase() throws -> GATTDatabase<16, 128, 1> {
    let name: [UInt8] = Array("herald".utf8)
    do { return try GATTDatabase<16, 128, 1>(deviceName: name.span) } catch {
        throw CLIError(exitCode: 1, message: "internal error building the GATT database: \(error)")
    }
}

/// Runs a command's body. Its `CLIError`s reach `HeraldCommand.main`, which words and numbers every
/// failure the same way (`herald <command>: <what> (<why>)`, `ExitStatus`).
func runReportingErrors(_ body: () throws -> Void) throws {
    try body()
}
