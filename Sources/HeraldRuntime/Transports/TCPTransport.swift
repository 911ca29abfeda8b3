import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP client carrying H4 bytes, e.g. to Bumble's `tcp-server:HOST:PORT` transport.
public final class TCPTransport: HCITransport {
    public let name: String
    private var fd: Int32
    private let io: FileDescriptorIO

    public init(host: String, port: UInt16, connectTimeout: Duration = .seconds(5)) throws(TransportError) {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let name = "tcp:\(shownHost):\(port)"
        self.name = name
        self.io = FileDescriptorIO(name: name, devicePath: nil, zeroReadIsEOF: true)
        self.fd = try Self.connect(host: host, port: port, name: name, timeout: connectTimeout, io: io)
    }

    deinit { close() }

    private static func connect(host: String, port: UInt16, name: String, timeout: Duration, io: FileDescriptorIO) throws(TransportError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else {
            throw .openFailed(name, reason: "cannot resolve host: \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }

        var lastError: Int32 = 0
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), info.pointee.ai_protocol)
            if fd < 0 { lastError = errno; continue }
            if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) != 0 {
                guard errno == EINPROGRESS else { lastError = errno; closeDescriptor(fd); continue }
                let revents = try io.wait(fd: fd, events: Int16(POLLOUT), timeout: timeout)
                var soError: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length)
                if revents == 0 { lastError = ETIMEDOUT; closeDescriptor(fd); continue }
                if soError != 0 { lastError = soError; closeDescriptor(fd); continue }
            }
            // H4 packets are small and latency-sensitive: do not let Nagle hold them back.
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            return fd
        }
        if lastError == ECONNREFUSED { throw .notFound(name) }
        throw .openFailed(name, reason: String(cString: strerror(lastError)))
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, timeout: Duration) throws(TransportError) -> Int {
        try io.read(fd: fd, into: buffer, timeout: timeout)
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(TransportError) {
        try io.write(fd: fd, bytes, send: true)
    }

    public func close() {
        guard fd >= 0 else { return }
        closeDescriptor(fd)
        fd = -1
    }
}
