import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Which way an HCI packet travelled, as btsnoop records it.
public enum BTSnoopDirection: Sendable, Equatable {
    /// Host → controller (commands, outgoing ACL).
    case sent
    /// Controller → host (events, incoming ACL).
    case received
}

/// The btsnoop v1 format (RFC 1761 "snoop" layout, as used by Android and read by Wireshark):
/// a 16-byte file header, then records of a 24-byte big-endian header and the packet bytes.
public enum BTSnoop {
    public static let magic: [UInt8] = Array("btsnoop\0".utf8)
    public static let version: UInt32 = 1
    /// Datalink 1002: HCI UART (H4), each packet starting with its H4 indicator byte.
    public static let datalinkH4: UInt32 = 1002
    /// Microseconds from 0 AD (1 Jan year 0, proleptic Gregorian) to the Unix epoch.
    public static let epochOffset: Int64 = 0x00dc_ddb3_0f2f_8000

    public static let fileHeaderSize = 16
    public static let recordHeaderSize = 24

    /// Flags bit 0: 0 = sent (host → controller), 1 = received.
    public static let flagReceived: UInt32 = 1 << 0
    /// Flags bit 1: 1 = command or event, 0 = data (ACL, SCO, ISO).
    public static let flagCommandOrEvent: UInt32 = 1 << 1

    /// Timestamp field value for a date.
    public static func timestamp(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) + epochOffset
    }

    /// The date a timestamp field stands for.
    public static func date(timestamp: Int64) -> Date {
        Date(timeIntervalSince1970: Double(timestamp - epochOffset) / 1_000_000)
    }

    /// Flags for a full H4 packet: H4 indicator 0x01 (command) and 0x04 (event) are command/event.
    public static func flags(packet: UnsafeRawBufferPointer, direction: BTSnoopDirection) -> UInt32 {
        var flags: UInt32 = direction == .received ? flagReceived : 0
        if let indicator = packet.first, indicator == 0x01 || indicator == 0x04 { flags |= flagCommandOrEvent }
        return flags
    }
}

/// Writes a btsnoop v1 H4 log, e.g. `herald ... --btsnoop run.btsnoop`, readable by Wireshark.
///
/// Each record goes to the file in a single write(2), so a crash or kill loses at most the record
/// being written and never leaves a torn one for another process to trip over; nothing is held in a
/// user-space buffer (so nothing older than a second is ever pending). Thread-safe.
public final class BTSnoopWriter: @unchecked Sendable {
    public let path: String
    private var fd: Int32
    private let lock = NSLock()
    private var scratch: [UInt8] = []
    /// The first write error, kept so logging never throws into the HCI path; see `lastError`.
    public private(set) var lastError: String?
    public private(set) var recordCount = 0

    /// Creates (or truncates) the file and writes the btsnoop header.
    public init(path: String) throws {
        self.path = path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "cannot create btsnoop log \(path): \(errnoText())"])
        }
        self.fd = fd
        var header: [UInt8] = BTSnoop.magic
        header.appendBigEndian(BTSnoop.version)
        header.appendBigEndian(BTSnoop.datalinkH4)
        guard writeAll(header) else {
            closeDescriptor(fd)
            self.fd = -1
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "cannot write btsnoop header to \(path): \(lastError ?? "")"])
        }
    }

    deinit { close() }

    /// Logs one full H4 packet (indicator byte included).
    public func write(packet: UnsafeRawBufferPointer, direction: BTSnoopDirection, at date: Date = Date()) {
        lock.lock()
        defer { lock.unlock() }
        guard fd >= 0 else { return }
        let length = UInt32(truncatingIfNeeded: packet.count)
        scratch.removeAll(keepingCapacity: true)
        scratch.appendBigEndian(length)                 // original length
        scratch.appendBigEndian(length)                 // included length: never truncated
        scratch.appendBigEndian(BTSnoop.flags(packet: packet, direction: direction))
        scratch.appendBigEndian(UInt32(0))              // cumulative drops
        scratch.appendBigEndian(UInt64(bitPattern: BTSnoop.timestamp(date)))
        scratch.append(contentsOf: packet)
        if writeAll(scratch) { recordCount += 1 }
    }

    /// Convenience for byte arrays.
    public func write(packet: [UInt8], direction: BTSnoopDirection, at date: Date = Date()) {
        packet.withUnsafeBytes { write(packet: $0, direction: direction, at: date) }
    }

    /// Pushes written records to stable storage (records already reach the kernel on `write`).
    public func flush() {
        lock.lock()
        defer { lock.unlock() }
        if fd >= 0 { _ = fdatasync(fd) }
    }

    public func close() {
        lock.lock()
        defer { lock.unlock() }
        guard fd >= 0 else { return }
        closeDescriptor(fd)
        fd = -1
    }

    private func writeAll(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let count = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if count > 0 { offset += count; continue }
                if count < 0 && errno == EINTR { continue }
                if lastError == nil { lastError = "write to \(path): \(errnoText())" }
                return false
            }
            return true
        }
    }
}

extension Array where Element == UInt8 {
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }
}
