import Foundation

/// When a damaged line is skipped and when the whole file is refused.
///
/// `analyse` and `match` read logs that a device may have been killed in the middle of writing: a
/// truncated last line, or one garbled line among thousands, is reported (file and line) and
/// skipped, so nothing else the device recorded is lost. A file in which no line is usable at all is
/// not that file's format (a binary, another CSV, a truncated header): the command stops with one
/// line naming the file and its first problem, exit status 2, and writes nothing.
public enum MalformedFile {
    /// The error for `path` when it has lines but none is usable, else nil.
    /// - Parameters:
    ///   - usable: lines that gave a row (headers and empty lines are neither usable nor malformed);
    ///   - malformed: every malformed line found so far (those of other files are ignored);
    ///   - format: what the file should have been ("a Herald contacts log").
    public static func refusal(path: String, usable: Int, malformed: [MalformedLine], format: String) -> String? {
        let own = malformed.filter { $0.file == path }
        guard usable == 0, let first = own.first else { return nil }
        let more = own.count > 1 ? "; \(own.count) malformed lines" : ""
        return "\(path): not \(format) (line \(first.line): \(first.reason)\(more))"
    }
}
