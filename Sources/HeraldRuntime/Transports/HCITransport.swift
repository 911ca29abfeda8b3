import Foundation

/// A byte pipe to an HCI controller speaking H4 (Core 5.4 Vol 4 Part A): the run loop reads whatever
/// bytes arrive and hands them to the core's H4 reassembler; it writes whole H4 packets.
///
/// Transports are not thread-safe: one owner reads and writes. `close()` is idempotent.
public protocol HCITransport: AnyObject {
    /// Names the port the way the user would spell it, e.g. `tty:/tmp/hci0`; every error quotes it.
    var name: String { get }
    /// Waits up to `timeout` for bytes; returns how many were read (0 on timeout).
    func read(into buffer: UnsafeMutableRawBufferPointer, timeout: Duration) throws(TransportError) -> Int
    /// Writes all of `bytes` or throws.
    func write(_ bytes: UnsafeRawBufferPointer) throws(TransportError)
    func close()
}

/// Everything that can go wrong with a transport. Every case names the port so a message on its own
/// tells the user which device is at fault.
public enum TransportError: Error, Equatable, CustomStringConvertible {
    /// The port does not exist (no such device file, or nothing listening on the TCP port).
    case notFound(String)
    /// The port exists but could not be opened or configured.
    case openFailed(String, reason: String)
    /// A read or write failed, e.g. the dongle was unplugged mid-run.
    case io(String, reason: String)
    /// The other end went away (pty master closed, TCP peer closed) or the transport was closed.
    case closed(String)
    /// The transport spec text could not be parsed.
    case invalidSpec(String, reason: String)
    /// Autodetection found no attached board; `ports` describes what is attached instead.
    case noBoardFound(ports: [String])
    /// Autodetection found more than one board, so the user must pick one.
    case severalBoards([String])

    public var description: String {
        switch self {
        case .notFound(let port):
            if port.hasPrefix("tcp:") { return "\(port): connection refused (nothing is listening)" }
            return "\(port): no such port"
        case .openFailed(let port, let reason):
            return "\(port): cannot open: \(reason)"
        case .io(let port, let reason):
            return "\(port): I/O error: \(reason)"
        case .closed(let port):
            return "\(port): port closed (device unplugged or the other end went away)"
        case .invalidSpec(let text, let reason):
            return "invalid transport '\(text)': \(reason)"
        case .noBoardFound(let ports):
            let listed = ports.isEmpty ? "none" : ports.joined(separator: ", ")
            return "no board found; ports: \(listed); pass --transport"
        case .severalBoards(let boards):
            return "several boards: \(boards.joined(separator: ", ")); pass --transport"
        }
    }
}

/// UART hardware flow control; the nRF `hci_uart` sample enables RTS/CTS by default.
public enum FlowControl: String, Codable, Equatable, Sendable, CaseIterable {
    case rtscts
    case none
}

/// A parsed `--transport` argument.
///
/// Grammar:
/// - `serial:PATH[,baud=N][,flow=rtscts|none]` — a serial port opened through libserialport
/// - `tty:PATH[,baud=N][,flow=rtscts|none]` — any tty (including ptys) opened with raw termios
/// - `tcp:HOST:PORT` — a TCP client, e.g. to Bumble's `tcp-server:` transport
/// - `PATH[,options]` — `serial:` when libserialport recognises the path, else `tty:` (decided at open)
///
/// `baud`/`flow` stay nil when not given so a board profile can fill them in (`filling(_:)`);
/// `effectiveBaud`/`effectiveFlow` apply the defaults (1 000 000 baud, RTS/CTS).
public struct TransportSpec: Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Equatable, Sendable {
        case serial, tty, tcp
        /// A bare path: resolved to `.serial` or `.tty` when opened.
        case auto
    }

    public static let defaultBaud = 1_000_000
    public static let defaultFlow = FlowControl.rtscts

    public var kind: Kind
    /// The device path, or the host name for `.tcp`.
    public var path: String
    /// The TCP port (only for `.tcp`).
    public var port: UInt16?
    public var baud: Int?
    public var flow: FlowControl?

    public init(kind: Kind, path: String, port: UInt16? = nil, baud: Int? = nil, flow: FlowControl? = nil) {
        self.kind = kind
        self.path = path
        self.port = port
        self.baud = baud
        self.flow = flow
    }

    public var effectiveBaud: Int { baud ?? Self.defaultBaud }
    public var effectiveFlow: FlowControl { flow ?? Self.defaultFlow }

    /// The canonical text form; `parse(description)` gives back an equal spec.
    public var description: String {
        switch kind {
        case .tcp:
            let host = path.contains(":") ? "[\(path)]" : path
            return "tcp:\(host):\(port ?? 0)"
        case .serial, .tty, .auto:
            var text = kind == .auto ? path : "\(kind.rawValue):\(path)"
            if let baud { text += ",baud=\(baud)" }
            if let flow { text += ",flow=\(flow.rawValue)" }
            return text
        }
    }

    /// Fills `baud` and `flow` that the user left out, e.g. from `--board NAME`.
    public func filling(baud defaultBaud: Int, flow defaultFlow: FlowControl) -> TransportSpec {
        var copy = self
        if kind != .tcp {
            copy.baud = baud ?? defaultBaud
            copy.flow = flow ?? defaultFlow
        }
        return copy
    }

    private static let schemes: [String: Kind] = ["serial": .serial, "tty": .tty, "tcp": .tcp]

    public static func parse(_ text: String) throws(TransportError) -> TransportSpec {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw .invalidSpec(text, reason: "empty") }

        // Paths may contain ':' (/dev/serial/by-path/pci-0000:00:14.0-...), so only a leading word
        // before the first ':' can be a scheme, and a path starting with '/' or '.' never has one.
        var kind = Kind.auto
        var rest = Substring(trimmed)
        if !trimmed.hasPrefix("/"), !trimmed.hasPrefix("."), let colon = trimmed.firstIndex(of: ":") {
            let word = trimmed[..<colon]
            if let known = schemes[word.lowercased()] {
                kind = known
                rest = trimmed[trimmed.index(after: colon)...]
            } else if word.allSatisfy({ $0.isLetter || $0 == "-" }) && !word.isEmpty {
                let hint = word == "pty" ? " (for a pty use tty:PATH)" : ""
                throw .invalidSpec(text, reason: "unknown transport '\(word)'; expected serial:, tty:, tcp: or a path\(hint)")
            }
        }

        if kind == .tcp { return try parseTCP(rest, text: text) }

        let parts = rest.split(separator: ",", omittingEmptySubsequences: false)
        let path = String(parts[0])
        guard !path.isEmpty else { throw .invalidSpec(text, reason: "missing device path") }
        var spec = TransportSpec(kind: kind, path: path)
        for option in parts.dropFirst() {
            guard let eq = option.firstIndex(of: "=") else {
                throw .invalidSpec(text, reason: "option '\(option)' is not key=value")
            }
            let key = option[..<eq].lowercased()
            let value = String(option[option.index(after: eq)...])
            switch key {
            case "baud":
                guard let baud = Int(value), baud > 0, baud <= 20_000_000 else {
                    throw .invalidSpec(text, reason: "baud '\(value)' is not a positive rate")
                }
                spec.baud = baud
            case "flow":
                guard let flow = FlowControl(rawValue: value.lowercased()) else {
                    throw .invalidSpec(text, reason: "flow '\(value)' must be rtscts or none")
                }
                spec.flow = flow
            default:
                throw .invalidSpec(text, reason: "unknown option '\(key)'; expected baud= or flow=")
            }
        }
        return spec
    }

    private static func parseTCP(_ rest: Substring, text: String) throws(TransportError) -> TransportSpec {
        var host: Substring
        var portText: Substring
        if rest.hasPrefix("[") {
            // [IPv6]:PORT
            guard let close = rest.firstIndex(of: "]") else {
                throw .invalidSpec(text, reason: "unterminated '[' in IPv6 host")
            }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            guard after.hasPrefix(":") else { throw .invalidSpec(text, reason: "expected tcp:HOST:PORT") }
            portText = after.dropFirst()
        } else {
            guard let colon = rest.lastIndex(of: ":") else {
                throw .invalidSpec(text, reason: "expected tcp:HOST:PORT")
            }
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
            if host.contains(":") { throw .invalidSpec(text, reason: "write an IPv6 host in brackets: tcp:[::1]:PORT") }
        }
        guard !host.isEmpty else { throw .invalidSpec(text, reason: "missing host in tcp:HOST:PORT") }
        guard let port = UInt16(portText), port > 0 else {
            throw .invalidSpec(text, reason: "port '\(portText)' is not 1...65535")
        }
        return TransportSpec(kind: .tcp, path: String(host), port: port)
    }
}

/// Opens the transport a spec names. A bare path becomes `serial:` when libserialport knows the
/// port (a real UART or USB CDC ACM device) and `tty:` otherwise (ptys, which libserialport 0.1.1
/// cannot open).
public func openTransport(_ spec: TransportSpec) throws(TransportError) -> HCITransport {
    switch spec.kind {
    case .serial:
        return try SerialTransport(path: spec.path, baud: spec.effectiveBaud, flow: spec.effectiveFlow)
    case .tty:
        return try TTYTransport(path: spec.path, baud: spec.effectiveBaud, flow: spec.effectiveFlow)
    case .tcp:
        return try TCPTransport(host: spec.path, port: spec.port ?? 0)
    case .auto:
        guard FileManager.default.fileExists(atPath: spec.path) else { throw .notFound(spec.path) }
        var resolved = spec
        resolved.kind = SerialTransport.recognises(spec.path) ? .serial : .tty
        return try openTransport(resolved)
    }
}
