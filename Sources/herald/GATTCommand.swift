import ArgumentParser
import BluetoothHost
import Foundation
import HeraldRuntime

struct GATTCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatt",
        abstract: "Connect to a peripheral and dump its GATT database: services, characteristics, descriptors, values.",
        discussion: """
        ADDRESS is AA:BB:CC:DD:EE:FF (a random address, the usual case for LE peripherals) or \
        AA:BB:CC:DD:EE:FF/public. Readable values are read in full (Read Blob past ATT_MTU). Exit status 5 when \
        the peripheral never answers the connection, 6 when the link drops or a discovery step fails, 130 when \
        interrupted (SIGINT/SIGTERM); on every way out the link is ended, or the attempt cancelled, first.
        """
    )

    @OptionGroup var controller: ControllerOptions
    @Option(name: .long, help: "The peripheral's address: AA:BB:CC:DD:EE:FF[/random|/public].") var connect: String
    @Option(name: .long, parsing: .unconditional, help: "Seconds to wait for the connection.") var timeout: Double = 10
    @Flag(name: .long, help: "Print the dump as one JSON object.") var json = false

    func validate() throws {
        guard Self.parseAddress(connect) != nil else {
            throw ValidationError("--connect: expected AA:BB:CC:DD:EE:FF[/random|/public], got '\(connect)'")
        }
        guard timeout > 0, timeout <= 600 else { throw ValidationError("--timeout must be between 0 and 600 seconds") }
    }

    static func parseAddress(_ text: String) -> DeviceAddress? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        var type = AddressType.randomDevice
        if parts.count == 2 {
            switch parts[1].lowercased() {
            case "random": type = .randomDevice
            case "public": type = .publicDevice
            default: return nil
            }
        }
        let fields = parts[0].split(separator: ":", omittingEmptySubsequences: false)
        guard fields.count == 6 else { return nil }
        var bytes = InlineArray<6, UInt8>(repeating: 0)
        for (i, o) in fields.enumerated() {
            guard o.count == 2, let v = octets(hex: o)?.first else { return nil }
            bytes[5 - i] = v  // text is most significant first; BDAddress stores little-endian
        }
        return DeviceAddress(type: type, address: BDAddress(bytes: bytes))
    }

    func run() throws {
        try runReportingErrors {
            guard let peer = Self.parseAddress(connect) else { throw CLIError(exitCode: 2, message: "bad address") }
            let timeoutMS = UInt64(timeout * 1000)
            let app = GATTDumper(peer: peer, connectTimeout: timeoutMS)
            let stack = BluetoothStack(configuration: StackSession<GATTDumper, 1, 16, 128>.defaultConfiguration(),
                                       database: try minimalDatabase(), app: app)
            let session = try controller.openSession(stack)
            defer { session.close() }
            let stop = SignalFlag.install()
            _ = try session.bringUp()
            // Every way out (Ctrl-C, the deadline, an error thrown below) ends the link and any attempt
            // first, as every command does: otherwise the peripheral stays connected to a controller
            // nobody serves until its supervision timeout or our next Reset.
            defer { session.releaseLinks() }
            // Connection timeout, then up to 30 s per ATT transaction; the run ends on its own well
            // before this unless a server trickles responses.
            let deadline = MonotonicClock.now() + timeoutMS + 120_000
            var finishedAt: UInt64?
            try session.run(deadline: deadline) { s in
                if case .failed(let f) = s.stack.hci.state {
                    throw CLIError(exitCode: 4, message: "controller failed: \(ControllerDescriptions.failureDescription(f))")
                }
                if s.app.state == .finished {
                    // Wait for our disconnection to complete, but not forever.
                    let now = MonotonicClock.now()
                    if finishedAt == nil { finishedAt = now }
                    if s.stack.le.connections.isEmpty || now > finishedAt! + 2_000 { return .stop }
                }
                if s.app.isDone, s.app.state != .finished { return .stop }
                return stop.isSet ? .stop : .keepRunning
            }
            let stateAtStop = session.app.state
            session.releaseLinks()  // before printing: the peripheral is let go at once
            let dumper = session.app
            if stop.isSet, stateAtStop == .connecting {
                throw CLIError(exitCode: 130, message: "interrupted before \(connect) answered")
            }
            switch dumper.state {
            case .failedToConnect(let status):
                let why = status == .connectionTimeout
                    ? "no answer within \(Self.seconds(timeout)) s"
                    : "connection failed: \(status.specificationName.map { "\($0)" } ?? "status") (0x\(hex(status.rawValue).lowercased()))"
                throw CLIError(exitCode: 5, message: "\(connect): \(why)")
            case .connecting:
                throw CLIError(exitCode: 5, message: "\(connect): no answer within \(Self.seconds(timeout)) s")
            default:
                break
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
                print(String(decoding: try encoder.encode(dumper.dump.named()), as: UTF8.self))
            } else {
                print(Self.text(dumper.dump), terminator: "")
            }
            // Our own release ends a link we were stopped on: that is the interruption, not a lost link.
            if stop.isSet, stateAtStop == .running {
                throw CLIError(exitCode: 130, message: "interrupted")
            }
            if stateAtStop == .running {
                throw CLIError(exitCode: 6, message: "dump incomplete: not done within \(Self.seconds(timeout + 120)) s (a server trickling its answers?)")
            }
            if case .disconnected(let reason) = dumper.state {
                throw CLIError(exitCode: 6, message: "link to \(connect) lost before the dump finished (reason 0x\(hex(reason.rawValue).lowercased()))")
            }
            if let error = dumper.dump.error {
                throw CLIError(exitCode: 6, message: "dump incomplete: \(error)")
            }
        }
    }

    static func seconds(_ s: Double) -> String {
        s == s.rounded() ? String(Int(s)) : String(s)
    }

    /// The human form, one attribute per line, indented by level (like bumble-gatt-dump).
    static func text(_ d: GATTDump) -> String {
        // "2a00 Device Name": the SIG's (or Herald's) name beside the UUID; text values as text too.
        func named(_ uuid: String) -> String { AssignedNumbers.name(uuid).map { "\(uuid) \($0)" } ?? uuid }
        func value(_ v: String) -> String {
            "value (\(v.count / 2)): \(v)" + (AssignedNumbers.text(hex: v).map { "  \"\($0)\"" } ?? "")
        }
        var out = "\(d.address)  ATT_MTU \(d.mtu)\n"
        for s in d.services {
            out += "SERVICE \(named(s.uuid))  [0x\(hex(s.start))-0x\(hex(s.end))]\n"
            for c in s.characteristics {
                out += "  CHARACTERISTIC \(named(c.uuid))  handle 0x\(hex(c.handle))  \(c.propertyNames.joined(separator: ","))\n"
                if let v = c.value { out += "    \(value(v))\n" }
                if let e = c.error { out += "    value: \(e)\n" }
                for x in c.descriptors {
                    out += "    DESCRIPTOR \(named(x.uuid))  handle 0x\(hex(x.handle))"
                    if let v = x.value { out += "  \(value(v))" }
                    if let e = x.error { out += "  \(e)" }
                    out += "\n"
                }
            }
        }
        out += "link: ATT_MTU \(d.mtu), LL data length tx \(d.dataLength.txOctets) / rx \(d.dataLength.rxOctets) octets, PHY tx \(d.phy.tx) / rx \(d.phy.rx)\n"
        let t = d.timings
        out += "timings (ms): connect \(t["connect"] ?? 0), mtu \(t["mtu"] ?? 0), discovery \(t["discovery"] ?? 0), reads \(t["read"] ?? 0)\n"
        return out
    }
}
