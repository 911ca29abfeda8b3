import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// poll()/read()/write() on a non-blocking descriptor, shared by the tty, serial and TCP transports
/// so they time out, report hang-ups and detect unplugged devices the same way.
struct FileDescriptorIO {
    /// The port name used in errors.
    let name: String
    /// For device files: checked after a quiet read so an unplugged USB dongle (whose tty may just
    /// keep reporting "no data") is noticed once its device node disappears.
    let devicePath: String?
    /// Whether a read of 0 bytes means the peer is gone (sockets) rather than "nothing yet".
    let zeroReadIsEOF: Bool
    /// A write that cannot make progress for this long (flow control stuck, controller wedged) fails.
    var writeTimeout: Duration = .seconds(2)

    /// Milliseconds for poll(), rounding up so a 0.5 ms timeout still waits.
    static func milliseconds(_ duration: Duration) -> Int32 {
        if duration <= .zero { return 0 }
        let (seconds, attoseconds) = duration.components
        if seconds >= Int64(Int32.max / 1000) { return Int32.max }
        let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(ms)
    }

    /// Waits for `events` on `fd`; returns the revents (0 on timeout). Retries EINTR with the time left.
    func wait(fd: Int32, events: Int16, timeout: Duration) throws(TransportError) -> Int16 {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let left = clock.now.duration(to: deadline)
            let result = poll(&entry, 1, Self.milliseconds(left))
            if result > 0 { return entry.revents }
            if result == 0 { return 0 }
            if errno == EINTR { continue }
            throw .io(name, reason: "poll: \(String(cString: strerror(errno)))")
        }
    }

    func read(fd: Int32, into buffer: UnsafeMutableRawBufferPointer, timeout: Duration) throws(TransportError) -> Int {
        guard fd >= 0 else { throw .closed(name) }
        guard buffer.count > 0 else { return 0 }
        let revents = try wait(fd: fd, events: Int16(POLLIN), timeout: timeout)
        if revents == 0 {
            try checkDeviceStillPresent()
            return 0
        }
        if revents & Int16(POLLNVAL) != 0 { throw .closed(name) }
        while true {
            let count = sysRead(fd, buffer.baseAddress, buffer.count)
            if count > 0 { return count }
            if count == 0 {
                // POLLIN with nothing to read: EOF on a socket; a hung-up tty (pty master closed,
                // USB device gone) also reads 0 with POLLHUP set.
                if zeroReadIsEOF || revents & Int16(POLLHUP) != 0 { throw .closed(name) }
                try checkDeviceStillPresent()
                return 0
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return 0
            case EIO, ENXIO, ENODEV, ECONNRESET, EPIPE:
                // Linux returns EIO from a pty slave whose master closed, and from a CDC ACM tty
                // after unplug.
                throw .closed(name)
            default:
                throw .io(name, reason: "read: \(String(cString: strerror(errno)))")
            }
        }
    }

    func write(fd: Int32, _ bytes: UnsafeRawBufferPointer, send: Bool = false) throws(TransportError) {
        guard fd >= 0 else { throw .closed(name) }
        guard var base = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let count: Int
            if send {
                count = sysSend(fd, base, left)
            } else {
                count = sysWrite(fd, base, left)
            }
            if count > 0 {
                base += count
                left -= count
                continue
            }
            if count < 0 {
                switch errno {
                case EINTR:
                    continue
                case EAGAIN, EWOULDBLOCK:
                    let revents = try wait(fd: fd, events: Int16(POLLOUT), timeout: writeTimeout)
                    if revents == 0 {
                        throw .io(name, reason: "write timed out after \(writeTimeout) with \(left) bytes unsent (flow control stuck?)")
                    }
                    if revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && revents & Int16(POLLOUT) == 0 {
                        throw .closed(name)
                    }
                    continue
                case EIO, ENXIO, ENODEV, ECONNRESET, EPIPE:
                    throw .closed(name)
                default:
                    throw .io(name, reason: "write: \(String(cString: strerror(errno)))")
                }
            }
        }
    }

    private func checkDeviceStillPresent() throws(TransportError) {
        if let devicePath, access(devicePath, F_OK) != 0 {
            throw .io(name, reason: "device \(devicePath) disappeared (unplugged?)")
        }
    }
}

// File-scope wrappers: inside FileDescriptorIO the names read/write refer to its own methods.
private func sysRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
private func sysWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { write(fd, bytes, count) }
#if os(Linux)
// MSG_NOSIGNAL: a peer that closed must not kill the process with SIGPIPE.
private func sysSend(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { send(fd, bytes, count, Int32(MSG_NOSIGNAL)) }
#else
private func sysSend(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { send(fd, bytes, count, 0) }
#endif

/// The current `errno` as text.
func errnoText() -> String { String(cString: strerror(errno)) }

/// close(2), callable from types that have their own `close()`.
func closeDescriptor(_ fd: Int32) { _ = close(fd) }
