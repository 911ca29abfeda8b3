import Foundation

/// Severity of a `log.txt` entry; a log keeps entries at or above its threshold.
public enum LogLevel: String, Sendable, Comparable, CaseIterable {
    case debug, info, fault, off

    private var rank: Int {
        switch self {
        case .debug: 0
        case .info: 1
        case .fault: 2
        case .off: 3
        }
    }
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rank < b.rank }
}

/// `log.txt`: `timestamp,level,subsystem,category,message`, one entry per line as the Herald apps'
/// `ConcreteSensorLogger` writes it. The timestamp is the contact log's (UTC, milliseconds) so entries
/// line up with `contacts.csv`; double quotes in the message become apostrophes and a message with a
/// comma is quoted, so every line stays five columns.
public enum TextLog {
    public static let fileName = "log.txt"

    public static func line(time: Date, level: LogLevel, subsystem: String, category: String, message: String) -> String {
        var m = message.replacingOccurrences(of: "\"", with: "'")
        // One entry per line: a newline in a message would start a bogus row.
        m = m.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        if m.contains(",") { m = "\"" + m + "\"" }
        return "\(logTimestamp(time)),\(level.rawValue),\(subsystem),\(category),\(m)"
    }

    /// A debug entry for events that have no row in `contacts.csv` (immediate-send data received).
    static func describe(_ e: SensorEventRecord) -> String? {
        guard e.kind == .receive else { return nil }
        return "didReceive (target=\(e.target),bytes=\(e.payload.count))"
    }
}

/// A failure to create or write one of the log files, naming the file.
public struct LogError: Error, CustomStringConvertible, Equatable {
    public var path: String
    public var reason: String
    public init(path: String, reason: String) { self.path = path; self.reason = reason }
    public var description: String { "\(path): \(reason)" }

    static func errno(_ path: String, _ what: String) -> LogError {
        LogError(path: path, reason: "\(what): \(String(cString: strerror(Foundation.errno)))")
    }
}

/// One open log file. Not thread-safe: `LogDirectory` touches it only on its writer queue.
///
/// Append files buffer lines in memory and hand them to the kernel with `write(2)` on every flush, so
/// after a flush the data survives the process being killed; `close` also `fsync`s. Whole-file logs
/// (statistics, detection) are replaced atomically through a temporary file and `rename(2)`.
final class LogFile {
    let path: String
    private var fd: Int32 = -1
    private var pending: [UInt8] = []
    /// Bytes at which a line append flushes at once rather than waiting for the timer.
    static let eagerFlushBytes = 64 * 1024

    /// Opens for appending; writes `header` when the file is new or empty.
    init(appending path: String, header: String?) throws(LogError) {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw LogError.errno(path, "cannot open") }
        var st = stat()
        guard fstat(fd, &st) == 0 else { let e = LogError.errno(path, "cannot stat"); Foundation.close(fd); throw e }
        if st.st_size == 0, let header { pending.append(contentsOf: Array((header + "\n").utf8)) }
    }

    /// A whole-file log: nothing is opened until the first `replace`, but the directory must be writable.
    init(replacing path: String, initial: String) throws(LogError) {
        self.path = path
        try replace(initial)
    }

    /// Most bytes kept for a file the kernel will not take (a full disk): lines past it are counted
    /// in `droppedLines` and not kept, so memory stays bounded and the file stays whole lines.
    static let maximumPendingBytes = 1 << 20
    private(set) var droppedLines = 0
    var pendingBytes: Int { pending.count }

    func append(_ line: String) throws(LogError) {
        guard pending.count + line.utf8.count + 1 <= Self.maximumPendingBytes else {
            droppedLines &+= 1
            if droppedLines == 1 { throw LogError(path: path, reason: "lines dropped: \(pending.count) bytes wait for a disk that takes none") }
            return
        }
        pending.append(contentsOf: line.utf8)
        pending.append(10)
        if pending.count >= Self.eagerFlushBytes { try flush() }
    }

    func flush() throws(LogError) {
        guard fd >= 0, !pending.isEmpty else { return }
        var offset = 0
        let total = pending.count
        let err: LogError? = pending.withUnsafeBytes { raw -> LogError? in
            while offset < total {
                let n = write(fd, raw.baseAddress! + offset, total - offset)
                if n < 0 {
                    if Foundation.errno == EINTR { continue }
                    return LogError.errno(path, "write failed")
                }
                offset += n
            }
            return nil
        }
        // Keep only what was not written; a full disk then holds at most `maximumPendingBytes` here.
        pending.removeFirst(offset)
        if let err { throw err }
    }

    func replace(_ content: String, sync: Bool = false) throws(LogError) {
        let tmp = path + ".tmp"
        let f = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard f >= 0 else { throw LogError.errno(tmp, "cannot open") }
        let bytes = Array(content.utf8)
        let ok = bytes.withUnsafeBytes { raw -> Bool in
            var off = 0
            while off < raw.count {
                let n = write(f, raw.baseAddress! + off, raw.count - off)
                if n < 0 { if Foundation.errno == EINTR { continue }; return false }
                off += n
            }
            return true
        }
        if !ok { let e = LogError.errno(tmp, "write failed"); Foundation.close(f); throw e }
        if sync, fsync(f) != 0 { let e = LogError.errno(tmp, "fsync failed"); Foundation.close(f); throw e }
        Foundation.close(f)
        guard rename(tmp, path) == 0 else { throw LogError.errno(path, "cannot replace") }
    }

    func close() throws(LogError) {
        defer { if fd >= 0 { Foundation.close(fd); fd = -1 } }
        try flush()
        if fd >= 0, fsync(fd) != 0 { throw LogError.errno(path, "fsync failed") }
    }
}
