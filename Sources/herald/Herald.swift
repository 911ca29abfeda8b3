import ArgumentParser

/// The `herald` command-line tool: each role or utility is a subcommand in its own file.
@main
struct HeraldCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "A Bluetooth LE host and Herald proximity protocol for nRF52 HCI controllers.",
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
        BenchServeCommand.self,
    ]
}

struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "version", abstract: "Print the tool's version.")
    func run() throws { print("herald 0.1.0") }
}
