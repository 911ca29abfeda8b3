import CSerialPort
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A serial port (UART or USB CDC ACM) opened and configured through libserialport: 8N1, the given
/// baud and flow control, DTR asserted. After configuration the port's descriptor is driven with
/// poll()/read()/write() like the tty transport, so timeouts and unplug detection behave the same.
public final class SerialTransport: HCITransport {
    public let name: String
    public let path: String
    private var port: OpaquePointer?
    private var fd: Int32 = -1
    private let io: FileDescriptorIO

    /// Whether libserialport knows this path as a serial port (false for ptys and missing files).
    public static func recognises(_ path: String) -> Bool {
        var port: OpaquePointer?
        guard sp_get_port_by_name(path, &port) == SP_OK, let port else { return false }
        sp_free_port(port)
        return true
    }

    public init(path: String, baud: Int = TransportSpec.defaultBaud, flow: FlowControl = TransportSpec.defaultFlow) throws(TransportError) {
        let name = "serial:\(path)"
        self.name = name
        self.path = path
        self.io = FileDescriptorIO(name: name, devicePath: path, zeroReadIsEOF: false)

        guard FileManager.default.fileExists(atPath: path) else { throw .notFound(name) }
        var port: OpaquePointer?
        guard sp_get_port_by_name(path, &port) == SP_OK, let port else {
            throw .openFailed(name, reason: "libserialport does not recognise it as a serial port; for a pty use tty:\(path)")
        }
        do throws(TransportError) {
            try check(sp_open(port, SP_MODE_READ_WRITE), "open", name)
            self.port = port
            // 8N1 plus the board's rate and flow control (the nRF hci_uart sample expects RTS/CTS).
            try check(sp_set_baudrate(port, Int32(clamping: baud)), "set baud \(baud)", name)
            try check(sp_set_bits(port, 8), "set 8 data bits", name)
            try check(sp_set_parity(port, SP_PARITY_NONE), "set no parity", name)
            try check(sp_set_stopbits(port, 1), "set 1 stop bit", name)
            try check(sp_set_flowcontrol(port, flow == .rtscts ? SP_FLOWCONTROL_RTSCTS : SP_FLOWCONTROL_NONE), "set flow control", name)
            // The nRF52840's USB CDC ACM only sends once the host asserts DTR.
            try check(sp_set_dtr(port, SP_DTR_ON), "assert DTR", name)
            _ = sp_flush(port, SP_BUF_BOTH)
            var handle: Int32 = -1
            try check(sp_get_port_handle(port, &handle), "get handle", name)
            guard handle >= 0 else { throw .openFailed(name, reason: "no descriptor") }
            if flock(handle, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK {
                throw .openFailed(name, reason: "in use by another process")
            }
            let flags = fcntl(handle, F_GETFL)
            _ = fcntl(handle, F_SETFL, flags | O_NONBLOCK)
            self.fd = handle
        } catch {
            if self.port != nil { sp_close(port) }
            sp_free_port(port)
            self.port = nil
            throw error
        }
    }

    deinit { close() }

    public func read(into buffer: UnsafeMutableRawBufferPointer, timeout: Duration) throws(TransportError) -> Int {
        try io.read(fd: fd, into: buffer, timeout: timeout)
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws(TransportError) {
        try io.write(fd: fd, bytes)
    }

    public func close() {
        guard let port else { return }
        sp_close(port)
        sp_free_port(port)
        self.port = nil
        fd = -1
    }
}

private func check(_ result: sp_return, _ action: String, _ name: String) throws(TransportError) {
    guard result != SP_OK else { return }
    throw .openFailed(name, reason: "\(action): \(describe(result))")
}

private func describe(_ result: sp_return) -> String {
    switch result {
    case SP_ERR_ARG: return "invalid argument"
    case SP_ERR_FAIL: return lastSerialError()
    case SP_ERR_MEM: return "out of memory"
    case SP_ERR_SUPP: return "not supported by this port"
    default: return "libserialport error \(result.rawValue)"
    }
}

/// libserialport's last OS error text.
func lastSerialError() -> String {
    guard let message = sp_last_error_message() else { return "unknown error" }
    defer { sp_free_error_message(message) }
    return String(cString: message)
}
