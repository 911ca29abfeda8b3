import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The host's end of EDTT's DUT relay (conformance fixture `bin/edtt_dut_relay.py`): a Unix stream
/// socket carrying EDTT's three DUT commands as text lines. We send `READY` once the controller is
/// up and advertising, then answer each command line (`SET n`, `NOTIFY`, `INDICATE`) with `OK`
/// after carrying it out.
public final class EDTTRelay {
    public enum Command: Equatable, Sendable {
        case set(Int)
        case notify
        case indicate
        /// Anything else: answered `OK` and logged, so EDTT is never left waiting.
        case unknown(String)
        /// The relay said `BYE` or closed the socket (EDTT finished): no answer.
        case closed
    }

    let fd: Int32
    public let path: String
    var buffer: [UInt8] = []
    var isClosed = false

    public init(path: String) throws {
        self.path = path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw EDTTRelayError(path: path, reason: String(cString: strerror(errno))) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            close(fd)
            throw EDTTRelayError(path: path, reason: "socket path longer than \(capacity - 1) octets")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in path.utf8.enumerated() { raw[i] = b }
            raw[path.utf8.count] = 0
        }
        let r = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard r == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw EDTTRelayError(path: path, reason: reason)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        self.fd = fd
    }

    deinit { close(fd) }

    public func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var done = 0
        while done < bytes.count {
            // MSG_NOSIGNAL: a relay that has gone must not end us with SIGPIPE.
            #if canImport(Glibc)
            let n = bytes[done...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            #else
            let n = bytes[done...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            #endif
            if n > 0 { done += n; continue }
            if n < 0, errno == EAGAIN || errno == EINTR { usleep(1000); continue }
            isClosed = true
            return
        }
    }

    /// The commands that arrived since the last call (none when nothing did), without blocking.
    public func poll() -> [Command] {
        guard !isClosed else { return [] }
        var chunk = [UInt8](repeating: 0, count: 256)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 { buffer += chunk[0..<n]; continue }
            if n == 0 { isClosed = true }
            break
        }
        var commands: [Command] = []
        while let nl = buffer.firstIndex(of: 0x0A) {
            let line = String(decoding: buffer[..<nl], as: UTF8.self).trimmingCharacters(in: .whitespaces)
            buffer.removeSubrange(...nl)
            commands.append(Self.parse(line))
        }
        if isClosed { commands.append(.closed) }
        return commands
    }

    static func parse(_ line: String) -> Command {
        let words = line.split(separator: " ")
        if words.count == 2, words[0] == "SET", let n = Int(words[1]) { return .set(n) }
        if line == "NOTIFY" { return .notify }
        if line == "INDICATE" { return .indicate }
        if line == "BYE" { return .closed }
        return .unknown(line)
    }
}

public struct EDTTRelayError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "cannot connect to the EDTT relay \(path) (\(reason))" }
}
