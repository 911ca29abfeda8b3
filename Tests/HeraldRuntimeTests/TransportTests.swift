import Foundation
import Testing
@testable import HeraldRuntime

#if canImport(Glibc)
import Glibc
#endif

// MARK: - Spec parsing

@Suite struct TransportSpecTests {
    @Test func parsesEachKind() throws {
        #expect(try TransportSpec.parse("serial:/dev/ttyACM0") == TransportSpec(kind: .serial, path: "/dev/ttyACM0"))
        #expect(try TransportSpec.parse("tty:/tmp/hci0") == TransportSpec(kind: .tty, path: "/tmp/hci0"))
        #expect(try TransportSpec.parse("tcp:localhost:9000") == TransportSpec(kind: .tcp, path: "localhost", port: 9000))
        #expect(try TransportSpec.parse("tcp:[::1]:9001") == TransportSpec(kind: .tcp, path: "::1", port: 9001))
        #expect(try TransportSpec.parse("/dev/ttyACM1") == TransportSpec(kind: .auto, path: "/dev/ttyACM1"))
        #expect(try TransportSpec.parse("./hci") == TransportSpec(kind: .auto, path: "./hci"))
    }

    @Test func parsesOptions() throws {
        let spec = try TransportSpec.parse("serial:/dev/ttyUSB0,baud=115200,flow=none")
        #expect(spec == TransportSpec(kind: .serial, path: "/dev/ttyUSB0", baud: 115_200, flow: FlowControl.none))
        #expect(spec.effectiveBaud == 115_200)
        #expect(spec.effectiveFlow == .none)
        let bare = try TransportSpec.parse("/dev/ttyACM0,flow=RTSCTS")
        #expect(bare.kind == .auto && bare.flow == .rtscts && bare.baud == nil)
    }

    @Test func defaultsAre1MbaudWithRTSCTS() throws {
        let spec = try TransportSpec.parse("tty:/tmp/x")
        #expect(spec.baud == nil && spec.flow == nil)
        #expect(spec.effectiveBaud == 1_000_000)
        #expect(spec.effectiveFlow == .rtscts)
    }

    @Test func pathsWithColonsAreNotSchemes() throws {
        let path = "/dev/serial/by-path/pci-0000:00:14.0-usb-0:1:1.0"
        #expect(try TransportSpec.parse(path) == TransportSpec(kind: .auto, path: path))
        #expect(try TransportSpec.parse("serial:" + path).path == path)
    }

    @Test func boardDefaultsFillOnlyWhatIsMissing() throws {
        let spec = try TransportSpec.parse("serial:/dev/ttyACM0,baud=115200")
        let filled = spec.filling(baud: 1_000_000, flow: .none)
        #expect(filled.baud == 115_200)
        #expect(filled.flow == FlowControl.none)
        let tcp = try TransportSpec.parse("tcp:h:1").filling(baud: 9600, flow: .rtscts)
        #expect(tcp.baud == nil && tcp.flow == nil)
    }

    @Test(arguments: [
        "serial:/dev/ttyACM0,baud=115200,flow=none", "tty:/tmp/hci0", "tcp:127.0.0.1:1234",
        "tcp:[::1]:7", "/dev/ttyACM0,baud=1000000", "tty:/tmp/a,flow=rtscts",
    ])
    func descriptionRoundTrips(text: String) throws {
        let spec = try TransportSpec.parse(text)
        #expect(spec.description == text)
        #expect(try TransportSpec.parse(spec.description) == spec)
    }

    @Test(arguments: [
        ("", "empty"),
        ("   ", "empty"),
        ("serial:", "missing device path"),
        ("tty:,baud=9600", "missing device path"),
        ("serial:/dev/x,baud=fast", "baud 'fast'"),
        ("serial:/dev/x,baud=0", "baud '0'"),
        ("serial:/dev/x,baud=-5", "baud '-5'"),
        ("serial:/dev/x,flow=xonxoff", "flow 'xonxoff' must be rtscts or none"),
        ("serial:/dev/x,parity=even", "unknown option 'parity'"),
        ("serial:/dev/x,baud", "option 'baud' is not key=value"),
        ("tcp:localhost", "expected tcp:HOST:PORT"),
        ("tcp::9000", "missing host"),
        ("tcp:localhost:0", "port '0'"),
        ("tcp:localhost:70000", "port '70000'"),
        ("tcp:localhost:http", "port 'http'"),
        ("tcp:::1:80", "brackets"),
        ("tcp:[::1:80", "unterminated"),
        ("pty:/tmp/hci0", "for a pty use tty:PATH"),
        ("usb:0", "unknown transport 'usb'"),
    ])
    func rejectsBadSpecs(text: String, fragment: String) {
        #expect {
            _ = try TransportSpec.parse(text)
        } throws: { error in
            guard case .invalidSpec(let quoted, let reason) = error as? TransportError else { return false }
            let message = (error as! TransportError).description
            return quoted == text && reason.contains(fragment) && message.contains("invalid transport")
        }
    }

    @Test func errorMessagesNameThePort() {
        #expect(TransportError.notFound("serial:/dev/ttyACM9").description.contains("/dev/ttyACM9"))
        #expect(TransportError.io("tty:/tmp/h", reason: "x").description.contains("tty:/tmp/h"))
        #expect(TransportError.closed("tcp:h:1").description.contains("tcp:h:1"))
        #expect(TransportError.notFound("tcp:h:1").description.contains("connection refused"))
        #expect(TransportError.noBoardFound(ports: ["/dev/ttyS0"]).description == "no board found; ports: /dev/ttyS0; pass --transport")
        #expect(TransportError.severalBoards(["a", "b"]).description.hasPrefix("several boards: a, b"))
    }
}

// MARK: - A pty pair for the tty transport

/// A pseudo-terminal: the test holds the master, the transport opens the slave by path.
final class PTYPair {
    var master: Int32
    let slavePath: String

    init() throws {
        // posix_openpt/grantpt/unlockpt are hidden from Swift behind _XOPEN_SOURCE; do what they do.
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        try #require(master >= 0, "open /dev/ptmx: \(errnoText())")
        // Linux asm-generic ioctls: TIOCSPTLCK = _IOW('T', 0x31, int), TIOCGPTN = _IOR('T', 0x30, unsigned).
        let TIOCSPTLCK: UInt = 0x4004_5431
        let TIOCGPTN: UInt = 0x8004_5430
        var unlock: Int32 = 0
        try #require(ioctl(master, TIOCSPTLCK, &unlock) == 0, "unlock pty: \(errnoText())")
        var number: UInt32 = 0
        try #require(ioctl(master, TIOCGPTN, &number) == 0, "pty number: \(errnoText())")
        slavePath = "/dev/pts/\(number)"
    }

    func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.write(master, $0.baseAddress, $0.count) }
    }

    /// Reads exactly `count` bytes the transport wrote (or fewer after 2 s).
    func receive(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        let deadline = Date().addingTimeInterval(2)
        while out.count < count && Date() < deadline {
            var entry = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: count - out.count)
            let n = chunk.withUnsafeMutableBytes { Glibc.read(master, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            out += chunk[0..<n]
        }
        return out
    }

    func closeMaster() {
        if master >= 0 { Glibc.close(master) }
        master = -1
    }

    deinit { closeMaster() }
}

extension HCITransport {
    /// Test helper: one read into a fresh buffer of `capacity` bytes.
    func readBytes(capacity: Int, timeout: Duration) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: capacity)
        let count = try buffer.withUnsafeMutableBytes { raw in try read(into: raw, timeout: timeout) }
        return Array(buffer[0..<count])
    }

    func writeBytes(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { raw in try write(raw) }
    }
}

// MARK: - tty transport

@Suite(.serialized) struct TTYTransportTests {
    @Test func readsPartiallyAndInOrder() throws {
        let pty = try PTYPair()
        let transport = try TTYTransport(path: pty.slavePath)
        defer { transport.close() }
        #expect(transport.name == "tty:\(pty.slavePath)")
        // An HCI Command Complete event for Reset, split across small reads.
        let event: [UInt8] = [0x04, 0x0e, 0x04, 0x01, 0x03, 0x0c, 0x00]
        pty.send(event)
        var got: [UInt8] = []
        while got.count < event.count {
            let chunk = try transport.readBytes(capacity: 3, timeout: .seconds(2))
            #expect(chunk.count <= 3)
            if chunk.isEmpty { break }
            got += chunk
        }
        #expect(got == event)
    }

    @Test func readTimesOutWithZero() throws {
        let pty = try PTYPair()
        let transport = try TTYTransport(path: pty.slavePath)
        defer { transport.close() }
        let clock = ContinuousClock()
        let start = clock.now
        let chunk = try transport.readBytes(capacity: 16, timeout: .milliseconds(120))
        let elapsed = start.duration(to: clock.now)
        #expect(chunk.isEmpty)
        #expect(elapsed >= .milliseconds(110))
        #expect(elapsed < .seconds(2))
        // A zero timeout just polls.
        #expect(try transport.readBytes(capacity: 16, timeout: .zero).isEmpty)
    }

    @Test func writesReachTheOtherEndUnmodified() throws {
        let pty = try PTYPair()
        let transport = try TTYTransport(path: pty.slavePath)
        defer { transport.close() }
        // Raw mode: 0x0a must not become 0x0d 0x0a, 0x03 must not raise SIGINT, 0x11 is not XON.
        let reset: [UInt8] = [0x01, 0x03, 0x0c, 0x00, 0x0a, 0x0d, 0x03, 0x11, 0x13, 0x7f, 0xff]
        try transport.writeBytes(reset)
        #expect(pty.receive(reset.count) == reset)
        // A larger write in one call.
        let big = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try transport.writeBytes(big)
        #expect(pty.receive(big.count) == big)
    }

    @Test func hangupIsReportedAsClosed() throws {
        let pty = try PTYPair()
        let transport = try TTYTransport(path: pty.slavePath)
        defer { transport.close() }
        pty.closeMaster()
        #expect(throws: TransportError.closed(transport.name)) {
            _ = try transport.readBytes(capacity: 8, timeout: .seconds(1))
        }
    }

    @Test func useAfterCloseThrowsClosed() throws {
        let pty = try PTYPair()
        let transport = try TTYTransport(path: pty.slavePath)
        transport.close()
        transport.close()  // idempotent
        #expect(throws: TransportError.closed(transport.name)) { try transport.writeBytes([0x01]) }
        #expect(throws: TransportError.closed(transport.name)) { _ = try transport.readBytes(capacity: 1, timeout: .zero) }
    }

    @Test func secondOpenOfTheSamePortIsRefused() throws {
        let pty = try PTYPair()
        let first = try TTYTransport(path: pty.slavePath)
        defer { first.close() }
        #expect(throws: TransportError.openFailed("tty:\(pty.slavePath)", reason: "in use by another process")) {
            _ = try TTYTransport(path: pty.slavePath)
        }
    }

    @Test func missingPortIsNotFound() {
        #expect(throws: TransportError.notFound("tty:/tmp/herald-no-such-pty")) {
            _ = try TTYTransport(path: "/tmp/herald-no-such-pty")
        }
        #expect(throws: TransportError.notFound("serial:/dev/herald-no-such-port")) {
            _ = try openTransport(TransportSpec.parse("serial:/dev/herald-no-such-port"))
        }
        #expect(throws: TransportError.notFound("/dev/herald-no-such-port")) {
            _ = try openTransport(TransportSpec.parse("/dev/herald-no-such-port"))
        }
    }

    @Test func regularFileIsNotATTY() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("herald-not-a-tty-\(getpid())").path
        _ = FileManager.default.createFile(atPath: path, contents: Data([1, 2, 3]))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: TransportError.openFailed("tty:\(path)", reason: "not a tty")) {
            _ = try TTYTransport(path: path)
        }
    }

    @Test func unsupportedBaudIsRejectedWithAHint() throws {
        let pty = try PTYPair()
        #expect {
            _ = try TTYTransport(path: pty.slavePath, baud: 123_456)
        } throws: { error in
            guard case .openFailed(_, let reason) = error as? TransportError else { return false }
            return reason.contains("123456") && reason.contains("serial:")
        }
    }

    @Test func barePtyPathOpensAsTTY() throws {
        // libserialport 0.1.1 cannot open ptys, so a bare pty path must resolve to the tty transport.
        let pty = try PTYPair()
        let transport = try openTransport(TransportSpec.parse(pty.slavePath))
        defer { transport.close() }
        #expect(transport.name == "tty:\(pty.slavePath)")
        pty.send([0x04, 0x0f])
        #expect(try transport.readBytes(capacity: 8, timeout: .seconds(1)) == [0x04, 0x0f])
    }

    @Test func symlinkedPtyWorksLikeBumblesPtyTransport() throws {
        let pty = try PTYPair()
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("herald-hci-\(getpid())").path
        try? FileManager.default.removeItem(atPath: link)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: pty.slavePath)
        defer { try? FileManager.default.removeItem(atPath: link) }
        let transport = try openTransport(TransportSpec.parse("tty:\(link)"))
        defer { transport.close() }
        try transport.writeBytes([0x01, 0x03, 0x0c, 0x00])
        #expect(pty.receive(4) == [0x01, 0x03, 0x0c, 0x00])
    }
}

// MARK: - TCP transport

/// A listening socket on 127.0.0.1 with a kernel-chosen port.
final class LocalListener {
    let fd: Int32
    let port: UInt16

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0, "bind: \(errnoText())")
        try #require(listen(fd, 4) == 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
    }

    /// The connection the transport made (already queued by the kernel).
    func acceptOne() -> Int32 { accept(fd, nil, nil) }

    deinit { Glibc.close(fd) }
}

@Suite struct TCPTransportTests {
    @Test func exchangesBytesBothWays() throws {
        let listener = try LocalListener()
        let transport = try openTransport(TransportSpec.parse("tcp:127.0.0.1:\(listener.port)"))
        defer { transport.close() }
        #expect(transport.name == "tcp:127.0.0.1:\(listener.port)")
        let peer = listener.acceptOne()
        try #require(peer >= 0)
        defer { Glibc.close(peer) }

        let command: [UInt8] = [0x01, 0x03, 0x0c, 0x00]
        try transport.writeBytes(command)
        var received = [UInt8](repeating: 0, count: 4)
        let n = received.withUnsafeMutableBytes { recv(peer, $0.baseAddress, 4, Int32(MSG_WAITALL)) }
        #expect(n == 4 && received == command)

        let event: [UInt8] = [0x04, 0x0e, 0x04, 0x01, 0x03, 0x0c, 0x00]
        _ = event.withUnsafeBytes { send(peer, $0.baseAddress, $0.count, 0) }
        var got: [UInt8] = []
        while got.count < event.count {
            let chunk = try transport.readBytes(capacity: 5, timeout: .seconds(2))
            if chunk.isEmpty { break }
            got += chunk
        }
        #expect(got == event)

        #expect(try transport.readBytes(capacity: 5, timeout: .milliseconds(50)).isEmpty)
    }

    @Test func peerCloseIsReportedAsClosed() throws {
        let listener = try LocalListener()
        let transport = try TCPTransport(host: "127.0.0.1", port: listener.port)
        defer { transport.close() }
        let peer = listener.acceptOne()
        Glibc.close(peer)
        #expect(throws: TransportError.closed(transport.name)) {
            _ = try transport.readBytes(capacity: 8, timeout: .seconds(2))
        }
    }

    @Test func refusedConnectionIsNotFound() throws {
        // Take a free port, then release it so nothing listens there.
        let port = try LocalListener().port
        #expect(throws: TransportError.notFound("tcp:127.0.0.1:\(port)")) {
            _ = try TCPTransport(host: "127.0.0.1", port: port)
        }
    }

    @Test func unresolvableHostFailsToOpen() {
        #expect {
            _ = try TCPTransport(host: "no-such-host.invalid", port: 1)
        } throws: { error in
            guard case .openFailed(let name, let reason) = error as? TransportError else { return false }
            return name == "tcp:no-such-host.invalid:1" && reason.contains("resolve")
        }
    }
}

// MARK: - Timeouts

@Test func pollMillisecondsRoundUp() {
    #expect(FileDescriptorIO.milliseconds(.zero) == 0)
    #expect(FileDescriptorIO.milliseconds(.microseconds(1)) == 1)
    #expect(FileDescriptorIO.milliseconds(.milliseconds(250)) == 250)
    #expect(FileDescriptorIO.milliseconds(.seconds(-1)) == 0)
    #expect(FileDescriptorIO.milliseconds(.seconds(1_000_000_000)) == Int32.max)
}

// MARK: - libserialport transport (no hardware here: only its failure paths)

@Suite struct SerialTransportTests {
    @Test func ptyIsNotASerialPortAndTheErrorSaysUseTTY() throws {
        let pty = try PTYPair()
        #expect(!SerialTransport.recognises(pty.slavePath))
        #expect {
            _ = try SerialTransport(path: pty.slavePath)
        } throws: { error in
            guard case .openFailed(let name, let reason) = error as? TransportError else { return false }
            return name == "serial:\(pty.slavePath)" && reason.contains("tty:\(pty.slavePath)")
        }
    }

    @Test func missingDeviceIsNotRecognised() {
        #expect(!SerialTransport.recognises("/dev/herald-no-such-port"))
    }
}
