import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Any tty opened with raw termios: ptys (Bumble's `pty:` virtual controllers) and real UARTs.
///
/// The descriptor is non-blocking with VMIN = VTIME = 0; reads wait with poll() so the timeout is
/// exact and independent of termios's 0.1 s VTIME granularity.
public final class TTYTransport: HCITransport {
    public let name: String
    public let path: String
    private var fd: Int32
    private let io: FileDescriptorIO

    public init(path: String, baud: Int = TransportSpec.defaultBaud, flow: FlowControl = TransportSpec.defaultFlow) throws(TransportError) {
        let name = "tty:\(path)"
        self.name = name
        self.path = path
        self.io = FileDescriptorIO(name: name, devicePath: path, zeroReadIsEOF: false)

        let fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT || code == ENXIO || code == ENODEV { throw .notFound(name) }
            throw .openFailed(name, reason: String(cString: strerror(code)))
        }
        do throws(TransportError) {
            // Two hosts on one controller corrupt each other's H4 stream: refuse a port another
            // process already holds.
            if flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK {
                throw .openFailed(name, reason: "in use by another process")
            }
            try Self.configure(fd: fd, name: name, baud: baud, flow: flow)
        } catch {
            closeDescriptor(fd)
            throw error
        }
        self.fd = fd
    }

    deinit { close() }

    static func configure(fd: Int32, name: String, baud: Int, flow: FlowControl) throws(TransportError) {
        guard isatty(fd) != 0 else { throw .openFailed(name, reason: "not a tty") }
        var options = termios()
        guard tcgetattr(fd, &options) == 0 else { throw .openFailed(name, reason: "tcgetattr: \(errnoText())") }
        cfmakeraw(&options)
        // 8N1, receiver on, ignore modem control lines (CLOCAL) so a missing DCD never blocks.
        options.c_cflag &= ~tcflag_t(CSIZE | PARENB | CSTOPB)
        options.c_cflag |= tcflag_t(CS8 | CREAD | CLOCAL)
        if flow == .rtscts {
            options.c_cflag |= tcflag_t(CRTSCTS)
        } else {
            options.c_cflag &= ~tcflag_t(CRTSCTS)
        }
        options.c_iflag &= ~tcflag_t(IXON | IXOFF | IXANY)
        withUnsafeMutableBytes(of: &options.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        guard let speed = termiosSpeed(baud) else {
            throw .openFailed(name, reason: "baud \(baud) is not a standard termios rate; use serial:PATH")
        }
        cfsetispeed(&options, speed)
        cfsetospeed(&options, speed)
        guard tcsetattr(fd, TCSANOW, &options) == 0 else { throw .openFailed(name, reason: "tcsetattr: \(errnoText())") }
        // Drop whatever a previous session left in the buffers: a half packet would desync H4.
        tcflush(fd, TCIOFLUSH)
    }

    static func termiosSpeed(_ baud: Int) -> speed_t? {
        let table: [Int: speed_t] = [
            9600: speed_t(B9600), 19200: speed_t(B19200), 38400: speed_t(B38400),
            57600: speed_t(B57600), 115_200: speed_t(B115200), 230_400: speed_t(B230400),
            460_800: speed_t(B460800), 500_000: speed_t(B500000), 576_000: speed_t(B576000),
            921_600: speed_t(B921600), 1_000_000: speed_t(B1000000), 1_152_000: speed_t(B1152000),
            1_500_000: speed_t(B1500000), 2_000_000: speed_t(B2000000), 2_500_000: speed_t(B2500000),
            3_000_000: speed_t(B3000000), 3_500_000: speed_t(B3500000), 4_000_000: speed_t(B4000000),
        ]
        return table[baud]
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, timeout: Duration) throws(TransportError) -> Int {
        try io.read(fd: fd, into: buffer, timeout: timeout)
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(TransportError) {
        try io.write(fd: fd, bytes)
    }

    public func close() {
        guard fd >= 0 else { return }
        closeDescriptor(fd)
        fd = -1
    }
}
