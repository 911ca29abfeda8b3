import ArgumentParser
import Foundation
import HeraldRuntime

/// The `herald` command-line tool: each role or utility is a subcommand in its own file.
@main
struct HeraldCommand: ParsableCommand {
    static let version = "herald 0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "A Bluetooth LE host and Herald proximity protocol for nRF52 HCI controllers.",
        discussion: "Exit status, the same for every command:\n"
            + ExitStatus.allCases.map { "  \($0.rawValue)  \($0.meaning)" }.joined(separator: "\n"),
        version: HeraldCommand.version,
        subcommands: HeraldCommand.all
    )

    /// Every subcommand, in the order `herald --help` lists them. Add new ones here.
    static let all: [ParsableCommand.Type] = [
        VersionCommand.self,
        InfoCommand.self,
        ScanCommand.self,
        PortsCommand.self,
        KeysCommand.self,
        MatchCommand.self,
        FlashCommand.self,
        BeaconCommand.self,
        WearableCommand.self,
        SenseCommand.self,
        AnalyseCommand.self,
        ServeCommand.self,
        GATTCommand.self,
        CheckCommand.self,
        BenchServeCommand.self,
        BenchWriteCommand.self,
    ]

    /// Parses, runs, and words every failure the same way: `herald <command>: <what> (<why>)` on standard
    /// error and a status from the one table (`ExitStatus`), whichever command and layer it came from.
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let name = commandPath(arguments)
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
        } catch {
            let (message, status) = report(error, command: name)
            if let message {
                if status == 0 { print(message) } else {
                    FileHandle.standardError.write(Data((CommandMessage.line(command: name, what: message) + "\n").utf8))
                }
            }
            Foundation.exit(status)
        }
    }

    /// The message (nil: already printed) and the exit status for an error that ended a command.
    static func report(_ error: Error, command: String) -> (String?, Int32) {
        switch error {
        case let e as CLIError:
            return (e.message, e.exitCode)
        case let e as ExitCode:
            return (nil, e.rawValue)
        case let e as KeyToolError:
            // Every key tool error is about what the user gave: a file, a time, an epoch.
            return (e.description, ExitStatus.usage.rawValue)
        case let e as DFUError:
            return (e.description, e.exitStatus.rawValue)
        default:
            break
        }
        let code = exitCode(for: error)
        if code == .success { return (fullMessage(for: error), 0) }  // --help, --version
        if code == .validationFailure {
            // ArgumentParser's own words ("Missing value for '--x <x>'"), lower-cased like ours, with where to look.
            var text = message(for: error)
            if let first = text.first, text.dropFirst().first?.isLowercase ?? false { text = first.lowercased() + text.dropFirst() }
            let help = command.isEmpty ? "herald --help" : "herald \(command) --help"
            return (text.contains("--help") ? text : "\(text) (see \(help))", ExitStatus.usage.rawValue)
        }
        return ("\(CommandMessage.reason(error))", ExitStatus.failed.rawValue)
    }

    /// "scan", "keys derive": the subcommand names at the front of the arguments, for the error prefix.
    static func commandPath(_ arguments: [String]) -> String {
        var path: [String] = []
        var candidates = all
        for argument in arguments {
            guard let match = candidates.first(where: {
                $0.configuration.commandName == argument || $0.configuration.aliases.contains(argument)
            }) else { break }
            path.append(match.configuration.commandName ?? argument)
            candidates = match.configuration.subcommands
        }
        return path.joined(separator: " ")
    }
}

struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "version", abstract: "Print the tool's version (also herald --version).")
    func run() throws { print(HeraldCommand.version) }
}
