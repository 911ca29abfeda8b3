import CSerialPort
import Foundation

/// `DFUByteLink` over a serial port through libserialport. The nRF52840 Dongle's bootloader is a USB
/// CDC ACM device, so baud rate and flow control do not matter on the wire, but DTR does: it is asserted
/// (as pyserial-based nrfutil does on open) so the device sees a host present.
/// (The transports helper is adding a general serial transport and `listSerialPorts()`; once merged
/// this file can use them. Kept separate here so the flasher builds on its own.)
public final class DFUSerialLink: DFUByteLink {
    public let path: String
    private var port: OpaquePointer?
    /// Non-fatal setup problems (e.g. DTR unsupported on a pseudo-terminal).
    public private(set) var warnings: [String] = []

    public init(path: String, baud: Int32 = 115_200, assertDTR: Bool = true) throws(DFUError) {
        self.path = path
        var p: OpaquePointer?
        guard sp_get_port_by_name(path, &p) == SP_OK, let p else { throw .port("no serial port \(path)") }
        guard sp_open(p, SP_MODE_READ_WRITE) == SP_OK else {
            let why = Self.lastError()
            sp_free_port(p)
            throw .port("cannot open \(path): \(why)\(why.contains("ermission") ? " — add yourself to the dialout group (sudo usermod -aG dialout $USER, then log in again)" : "")")
        }
        port = p
        if sp_set_baudrate(p, baud) != SP_OK { warnings.append("baud rate not set: \(Self.lastError())") }
        _ = sp_set_bits(p, 8)
        _ = sp_set_parity(p, SP_PARITY_NONE)
        _ = sp_set_stopbits(p, 1)
        if sp_set_flowcontrol(p, SP_FLOWCONTROL_NONE) != SP_OK { warnings.append("flow control not set: \(Self.lastError())") }
        if assertDTR && sp_set_dtr(p, SP_DTR_ON) != SP_OK {
            warnings.append("could not assert DTR on \(path) (\(Self.lastError())); a pseudo-terminal has none")
        }
        _ = sp_flush(p, SP_BUF_BOTH)
    }

    deinit { close() }

    public func close() {
        if let port {
            sp_close(port)
            sp_free_port(port)
        }
        port = nil
    }

    public func write(_ bytes: [UInt8]) throws(DFUError) {
        guard let port else { throw .port("\(path) is closed") }
        var done = 0
        while done < bytes.count {
            let n = bytes[done...].withUnsafeBufferPointer { sp_blocking_write(port, $0.baseAddress, $0.count, 2000) }
            if n.rawValue < 0 { throw .deviceDisappeared(detail: "write to \(path) failed: \(Self.lastError())", firmwareOffset: nil, firmwareSize: nil) }
            if n.rawValue == 0 { throw .port("write to \(path) timed out (device not reading?)") }
            done += Int(n.rawValue)
        }
    }

    public func read(timeoutMs: Int) throws(DFUError) -> [UInt8] {
        guard let port else { throw .port("\(path) is closed") }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { sp_blocking_read_next(port, $0.baseAddress, $0.count, UInt32(max(1, timeoutMs))) }
        if n.rawValue < 0 {
            throw .deviceDisappeared(detail: "read from \(path) failed: \(Self.lastError())", firmwareOffset: nil, firmwareSize: nil)
        }
        return Array(buffer[0..<Int(n.rawValue)])
    }

    static func lastError() -> String {
        guard let m = sp_last_error_message() else { return "unknown error" }
        defer { sp_free_error_message(m) }
        return String(cString: m)
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
