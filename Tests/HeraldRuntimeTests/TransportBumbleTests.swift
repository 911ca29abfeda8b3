import Foundation
import Testing
@testable import HeraldRuntime

#if canImport(Glibc)
import Glibc
#endif

/// A Python with Bumble 0.0.236: `$HERALD_PYTHON`, else the repo's `.venv` (Tools/test creates it).
let bumblePython: String? = {
    var candidates: [String] = []
    if let env = ProcessInfo.processInfo.environment["HERALD_PYTHON"] { candidates.append(env) }
    candidates.append(repoRoot.appendingPathComponent(".venv/bin/python").path)
    for path in candidates where FileManager.default.isExecutableFile(atPath: path) {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: path)
        probe.arguments = ["-c", "import bumble.apps.controllers"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { continue }
        probe.waitUntilExit()
        if probe.terminationStatus == 0 { return path }
    }
    return nil
}()

/// Bumble virtual controllers on one simulated radio (`python -m bumble.apps.controllers T1 T2`; the
/// app wants at least two), stopped at deinit.
final class BumbleControllers {
    let process = Process()

    init(python: String, transports: [String]) throws {
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-m", "bumble.apps.controllers"] + transports
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        // SIGKILL: the child inherits the test runner's signal mask, in which SIGTERM is blocked.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// Reads one complete H4 event (indicator 0x04, code, length, parameters; Core 5.4 Vol 4 Part E 5.4.4)
/// through the transport, however the bytes are split.
func readEvent(_ transport: HCITransport, timeout: Duration = .seconds(5)) throws -> [UInt8] {
    var bytes: [UInt8] = []
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while clock.now < deadline {
        if bytes.count >= 3 && bytes.count == 3 + Int(bytes[2]) { return bytes }
        let need = bytes.count < 3 ? 3 - bytes.count : 3 + Int(bytes[2]) - bytes.count
        bytes += try transport.readBytes(capacity: need, timeout: .milliseconds(200))
    }
    Issue.record("timed out with \(bytes) after \(timeout)")
    return bytes
}

/// Reset, Read BD_ADDR and LE Read Buffer Size against a real (virtual) controller.
func bringUp(_ transport: HCITransport) throws {
    try transport.writeBytes([0x01, 0x03, 0x0c, 0x00])
    #expect(try readEvent(transport) == [0x04, 0x0e, 0x04, 0x01, 0x03, 0x0c, 0x00])
    try transport.writeBytes([0x01, 0x09, 0x10, 0x00])
    let address = try readEvent(transport)
    #expect(address.count == 13 && Array(address[0..<7]) == [0x04, 0x0e, 0x0a, 0x01, 0x09, 0x10, 0x00])
    try transport.writeBytes([0x01, 0x02, 0x20, 0x00])
    let buffer = try readEvent(transport)
    #expect(buffer.count == 10 && Array(buffer[0..<7]) == [0x04, 0x0e, 0x07, 0x01, 0x02, 0x20, 0x00])
}

@Suite(.enabled(if: bumblePython != nil, "no Python with bumble (run Tools/test once, or set HERALD_PYTHON)"),
       .serialized, .timeLimit(.minutes(1)))
struct TransportBumbleTests {
    @Test func ttyTransportTalksToABumblePtyController() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("herald-bumble-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("hci0").path
        let controller = try BumbleControllers(python: try #require(bumblePython),
                                               transports: ["pty:\(path)", "pty:\(dir.appendingPathComponent("hci1").path)"])
        let deadline = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: path) && Date() < deadline && controller.process.isRunning {
            usleep(50_000)
        }
        // A bare path: Bumble's pty is unknown to libserialport, so this must pick the tty transport.
        let transport = try openTransport(TransportSpec.parse(path))
        defer { transport.close() }
        #expect(transport.name == "tty:\(path)")
        try bringUp(transport)
    }

    @Test func tcpTransportTalksToABumbleTCPServerController() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("herald-bumble-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let port = try LocalListener().port  // a port that was free a moment ago
        let controller = try BumbleControllers(python: try #require(bumblePython),
                                               transports: ["tcp-server:127.0.0.1:\(port)", "pty:\(dir.appendingPathComponent("hci1").path)"])
        var transport: HCITransport?
        let deadline = Date().addingTimeInterval(20)
        while transport == nil && Date() < deadline && controller.process.isRunning {
            // Refused (notFound) while Bumble is still starting.
            transport = try? openTransport(TransportSpec.parse("tcp:127.0.0.1:\(port)"))
            if transport == nil { usleep(100_000) }
        }
        let connected = try #require(transport)
        defer { connected.close() }
        try bringUp(connected)
    }
}
