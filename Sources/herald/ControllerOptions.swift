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

    /// Opens the transport and the capture. Errors are reported and mapped to exit codes:
    /// 2 for a port that does not exist or a bad spec.
    func openSession() throws -> ControllerSession {
        let profile = try selectedBoard()
        let spec: TransportSpec
        if let transport {
            do {
                let parsed = try TransportSpec.parse(transport)
                if let d = profile?.transportDefaults() { spec = parsed.filling(baud: d.baud, flow: d.flow) } else { spec = parsed }
            } catch {
                throw CLIError(exitCode: 2, message: "\(error)")
            }
        } else {
            do {
                let boards = (try? BoardProfile.loadAll(from: BoardProfile.defaultDirectory())) ?? []
                let found = try autodetectTransport(boards: boards, board: profile)
                FileHandle.standardError.write(Data("using \(found.description)\n".utf8))
                spec = found.0
            } catch {
                throw CLIError(exitCode: 2, message: "\(error)")
            }
        }
        let link: HCITransport
        do { link = try openTransport(spec) } catch {
            throw CLIError(exitCode: 2, message: "\(error)")
        }
        var snoop: BTSnoopWriter?
        if let btsnoop {
            do { snoop = try BTSnoopWriter(path: btsnoop) } catch {
                link.close()
                throw CLIError(exitCode: 2, message: "cannot write btsnoop capture \(btsnoop): \(error)")
            }
        }
        return ControllerSession(transport: link, snoop: snoop)
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

/// An error that ends the command with a message on standard error and a specific exit status.
struct CLIError: Error, CustomStringConvertible {
    var exitCode: Int32
    var message: String
    var description: String { message }
}

/// Runs bring-up to completion, or throws the CLI error the user should see.
struct BringUpWaiter: HostDelegate {
    var ready: ControllerInfo?
    var failure: ControllerFailure?
    mutating func hostDidBecomeReady(_ info: ControllerInfo) { ready = info }
    mutating func hostControllerDidFail(_ f: ControllerFailure) { failure = f }
}

extension ControllerSession {
    /// Brings the controller up; exit status 3 when it never answers.
    func bringUp() throws -> ControllerInfo {
        try start()
        var waiter = BringUpWaiter()
        try run(delegate: &waiter, deadline: MonotonicClock.now() + 15_000) { d, _ in
            d.ready != nil || d.failure != nil ? .stop : .keepRunning
        }
        if let info = waiter.ready { return info }
        switch waiter.failure {
        case .noResponse(let resets)?:
            throw CLIError(exitCode: 3, message: "no HCI response on \(transport.name) after \(resets) resets; is it running the hci_uart image?")
        case let f?:
            throw CLIError(exitCode: 3, message: "controller on \(transport.name) failed during bring-up: \(ControllerDescriptions.failureDescription(f))")
        case nil:
            throw CLIError(exitCode: 3, message: "controller on \(transport.name) did not finish bring-up in 15 s")
        }
    }
}

/// Prints a CLI error and exits with its status (ArgumentParser would print usage for other errors).
func runReportingErrors(_ body: () throws -> Void) throws {
    do { try body() } catch let e as CLIError {
        FileHandle.standardError.write(Data("herald: \(e.message)\n".utf8))
        throw ExitCode(e.exitCode)
    }
}
