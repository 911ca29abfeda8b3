import CSerialPort
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `DFUByteLink` over a serial port, with POSIX termios. The nRF52840 Dongle's bootloader is a USB
/// CDC ACM device, so baud rate and flow control do not matter on the wire, but DTR does: it is asserted
/// (as pyserial-based nrfutil does on open) so the device sees a host present.
/// POSIX rather than libserialport for the I/O because libserialport refuses ports it cannot find in
/// sysfs, pseudo-terminals included, and the tests run the bootloader simulator on a pty.
/// (The transports helper is adding a general serial transport; once merged this file can use it.)
public final class DFUSerialLink: DFUByteLink {
    public let path: String
    private var fd: Int32 = -1
    /// Bytes the device has taken since the port was opened: whether a write that times out is the
    /// first contact (exit 5) or a transfer that stopped midway (exit 6).
    public private(set) var bytesWritten = 0
    /// Non-fatal setup problems (e.g. DTR unsupported on a pseudo-terminal).
    public private(set) var warnings: [String] = []

    public init(path: String, assertDTR: Bool = true) throws(DFUError) {
        self.path = path
        let fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else {
            let e = errno
            let why = String(cString: strerror(e))
            throw .port("cannot open \(path): \(why)\(e == EACCES ? " — add yourself to the dialout group (sudo usermod -aG dialout $USER, then log in again)" : "")")
        }
        self.fd = fd
        var t = termios()
        if tcgetattr(fd, &t) == 0 {
            cfmakeraw(&t)
            t.c_cflag |= tcflag_t(CLOCAL | CREAD)
            t.c_cflag &= ~tcflag_t(CRTSCTS)
            cfsetispeed(&t, speed_t(B115200))
            cfsetospeed(&t, speed_t(B115200))
            if tcsetattr(fd, TCSANOW, &t) != 0 { warnings.append("could not configure \(path): \(String(cString: strerror(errno)))") }
        } else {
            warnings.append("\(path) is not a terminal device")
        }
        if assertDTR {
            var bits = Int32(TIOCM_DTR)
            if ioctl(fd, UInt(TIOCMBIS), &bits) != 0 {
                warnings.append("could not assert DTR on \(path) (\(String(cString: strerror(errno)))); a pseudo-terminal has none")
            }
        }
        tcflush(fd, TCIOFLUSH)
    }

    deinit { close() }

    public func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
    }

    private func gone(_ what: String, _ e: Int32) -> DFUError {
        .deviceDisappeared(detail: "\(what) \(path) failed: \(String(cString: strerror(e)))", firmwareOffset: nil, firmwareSize: nil)
    }

    public func write(_ bytes: [UInt8]) throws(DFUError) {
        guard fd >= 0 else { throw .port("\(path) is closed") }
        var done = 0
        let deadline = Date().addingTimeInterval(2)
        while done < bytes.count {
            let n = bytes[done...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n > 0 { done += n; bytesWritten += n; continue }
            let e = errno
            if n < 0 && (e == EAGAIN || e == EINTR) {
                if Date() > deadline { throw .writeTimeout(detail: "write to \(path) timed out", sentBefore: bytesWritten) }
                var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&pfd, 1, 50)
                continue
            }
            throw gone("write to", e)
        }
    }

    public func read(timeoutMs: Int) throws(DFUError) -> [UInt8] {
        guard fd >= 0 else { throw .port("\(path) is closed") }
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let r = poll(&pfd, 1, Int32(clamping: max(1, timeoutMs)))
        if r < 0 {
            if errno == EINTR { return [] }
            throw gone("poll on", errno)
        }
        if r == 0 { return [] }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        if n > 0 { return Array(buffer[0..<n]) }
        if n < 0 && (errno == EAGAIN || errno == EINTR) { return [] }
        // Readable but 0 bytes (hang-up) or an error such as EIO/ENODEV: the device went away.
        throw gone("read from", n == 0 ? EIO : errno)
    }
}

/// A serial port and, for USB devices, its identifiers.
public struct DFUPortInfo: Sendable, Equatable {
    public var path: String
    public var vid: UInt16?
    public var pid: UInt16?
    public var product: String?

    public init(path: String, vid: UInt16? = nil, pid: UInt16? = nil, product: String? = nil) {
        self.path = path
        self.vid = vid
        self.pid = pid
        self.product = product
    }

    public var usbID: String? {
        guard let vid, let pid else { return nil }
        return String(format: "%04X:%04X", vid, pid)
    }
}

/// Finds the dongle's bootloader among the serial ports.
public enum DFUPortFinder {
    /// Nordic's open DFU bootloader on the nRF52840 Dongle (PCA10059).
    public static let bootloaderID: (vid: UInt16, pid: UInt16) = (0x1915, 0x521F)
    /// Zephyr's default USB VID:PID, what the dongle shows while running an application such as hci_uart.
    public static let zephyrApplicationID: (vid: UInt16, pid: UInt16) = (0x2FE3, 0x0100)

    public static func listPorts() -> [DFUPortInfo] {
        var list: UnsafeMutablePointer<OpaquePointer?>?
        guard sp_list_ports(&list) == SP_OK, let list else { return [] }
        defer { sp_free_port_list(list) }
        var out: [DFUPortInfo] = []
        var i = 0
        while let p = list[i] {
            i += 1
            guard let name = sp_get_port_name(p) else { continue }
            var info = DFUPortInfo(path: String(cString: name))
            if sp_get_port_transport(p) == SP_TRANSPORT_USB {
                var vid: Int32 = 0, pid: Int32 = 0
                if sp_get_port_usb_vid_pid(p, &vid, &pid) == SP_OK {
                    info.vid = UInt16(truncatingIfNeeded: vid)
                    info.pid = UInt16(truncatingIfNeeded: pid)
                }
                if let prod = sp_get_port_usb_product(p) { info.product = String(cString: prod) }
            }
            out.append(info)
        }
        return out
    }

    /// Picks the one bootloader port, or explains what to do.
    public static func choose(from ports: [DFUPortInfo]) throws(DFUError) -> DFUPortInfo {
        let boot = ports.filter { $0.vid == bootloaderID.vid && $0.pid == bootloaderID.pid }
        if boot.count == 1 { return boot[0] }
        if boot.count > 1 {
            throw .noDevice("several devices in DFU bootloader mode (\(boot.map(\.path).joined(separator: ", "))); choose one with --port")
        }
        let apps = ports.filter {
            ($0.vid == zephyrApplicationID.vid && $0.pid == zephyrApplicationID.pid) || $0.vid == bootloaderID.vid
        }
        if let app = apps.first {
            throw .noDevice("found \(app.product ?? "a device") (USB \(app.usbID ?? "?")) at \(app.path), running an application, not the bootloader: press the dongle's RESET button (the small sideways button) — the red LED pulses in bootloader mode — then run this again")
        }
        let seen = ports.compactMap { p in p.usbID.map { "\(p.path) \($0)" } }
        throw .noDevice("no nRF52840 Dongle in DFU bootloader mode (USB 1915:521F) found\(seen.isEmpty ? "" : " (USB serial ports: \(seen.joined(separator: ", ")))"); plug it in and press RESET, or name the port with --port")
    }
}
