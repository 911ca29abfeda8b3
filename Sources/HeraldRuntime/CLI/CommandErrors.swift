import Foundation

/// The exit status of every `herald` command: one table for all of them (README, *Exit status*).
/// The same fault gives the same status whichever command meets it.
public enum ExitStatus: Int32, CaseIterable, Sendable {
    /// The command did what was asked.
    case success = 0
    /// The command ran and could not do what was asked: its input held nothing usable, a device
    /// refused a request, a check failed, or an internal error.
    case failed = 1
    /// What was asked cannot be used: an unknown or missing option, a bad value, or a file, directory
    /// or port that cannot be opened, read or written. Nothing was started.
    case usage = 2
    /// The controller never answered, or failed while it was being brought up.
    case noController = 3
    /// The controller failed while the command was running.
    case controllerFailed = 4
    /// The remote device (a peripheral to connect to, a DFU bootloader) never answered.
    case noAnswer = 5
    /// The link to the remote device dropped, or one of its procedures failed midway.
    case linkLost = 6
    /// Interrupted (SIGINT) before the command finished.
    case interrupted = 130

    /// One line for the README's table and `herald --help`.
    public var meaning: String {
        switch self {
        case .success: "done"
        case .failed: "ran, but could not do what was asked (nothing usable in the input, a device refused, a check failed)"
        case .usage: "bad option or value, or a file, directory or port that cannot be opened, read or written; nothing was started"
        case .noController: "the controller never answered, or failed during bring-up"
        case .controllerFailed: "the controller failed while running"
        case .noAnswer: "the remote device (peripheral, DFU bootloader) never answered"
        case .linkLost: "the link to the remote device dropped, or a procedure on it failed midway"
        case .interrupted: "interrupted (Ctrl-C) before it finished"
        }
    }
}

/// How every `herald` command words a failure: `herald <command>: <what> (<why>)`, one line on standard
/// error, the reason in words and never a raw `NSError` dump.
public enum CommandMessage {
    /// `herald scan: cannot write r.html (permission denied)`.
    public static func line(command: String, what: String, why: String? = nil) -> String {
        let prefix = command.isEmpty ? "herald" : "herald \(command)"
        guard let why, !why.isEmpty else { return "\(prefix): \(what)" }
        return "\(prefix): \(what) (\(why))"
    }

    /// The reason an error carries, in words: "no such file or directory", "permission denied".
    /// Foundation's file errors wrap the POSIX error that says it; their own description is a dump.
    public static func reason(_ error: Error) -> String {
        if let posix = error as? POSIXError { return strerrorText(posix.code.rawValue) }
        let ns = error as NSError
        if ns.domain == NSPOSIXErrorDomain { return strerrorText(Int32(ns.code)) }
        if ns.domain == NSCocoaErrorDomain {
            if let under = ns.userInfo[NSUnderlyingErrorKey] as? NSError, under.domain == NSPOSIXErrorDomain {
                return strerrorText(Int32(under.code))
            }
            if let text = ns.userInfo[NSLocalizedDescriptionKey] as? String { return text }
            switch CocoaError.Code(rawValue: ns.code) {
            case .fileNoSuchFile, .fileReadNoSuchFile: return strerrorText(ENOENT)
            case .fileReadNoPermission, .fileWriteNoPermission: return strerrorText(EACCES)
            case .fileWriteOutOfSpace: return strerrorText(ENOSPC)
            case .fileWriteVolumeReadOnly: return strerrorText(EROFS)
            case .fileReadInapplicableStringEncoding, .fileReadCorruptFile: return "not UTF-8 text"
            default: return "file error \(ns.code)"
            }
        }
        // Our own errors describe themselves in words.
        return String(describing: error)
    }

    /// `strerror` in lower case ("no such file or directory"), as the rest of a message is.
    public static func strerrorText(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        guard let first = text.first, text.dropFirst().first?.isLowercase ?? true else { return text }
        return first.lowercased() + text.dropFirst()
    }

    /// Reads a whole file as text, or throws an error whose message is `cannot read PATH (why)`. Bytes
    /// that are not UTF-8 become U+FFFD, so a damaged line is reported by its parser, not the whole file.
    public static func readText(_ path: String, what: String? = nil) throws(FileProblem) -> String {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw FileProblem(path: path, action: "read", what: what, why: reason(error))
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A file that cannot be read or written, with the reason: `cannot read emptyA/contacts.csv (no such file or directory)`.
public struct FileProblem: Error, CustomStringConvertible, Equatable {
    public var path: String
    public var action: String
    public var what: String?
    public var why: String

    public init(path: String, action: String, what: String? = nil, why: String) {
        self.path = path
        self.action = action
        self.what = what
        self.why = why
    }

    public var description: String { "cannot \(action) \(what.map { "\($0) " } ?? "")\(path) (\(why))" }
}
