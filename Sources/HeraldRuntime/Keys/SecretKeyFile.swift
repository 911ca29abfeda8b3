import Foundation
import Herald
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Errors from the key tools, each a sentence naming what to fix.
public struct KeyToolError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The device's secret material on disk: the 2048-byte Simple payload secret key in FILE, and the
/// 16-byte identity resolving key (for its resolvable private addresses) beside it in FILE.irk.
/// Both are raw bytes, mode 0600; readers refuse files that group or others can read.
public enum SecretKeyFile {
    public static let irkSize = 16

    public static func irkPath(for path: String) -> String { path + ".irk" }

    /// Bytes from the system CSPRNG (/dev/urandom: the kernel's ChaCha20 generator, the same source
    /// getrandom(2) draws from, without getrandom's missing Glibc binding).
    public static func randomBytes(_ count: Int) throws -> [UInt8] {
        let fd = open("/dev/urandom", O_RDONLY)
        guard fd >= 0 else { throw KeyToolError("cannot open /dev/urandom: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var out = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = out.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, count - filled) }
            if n < 0 { if errno == EINTR { continue }; throw KeyToolError("cannot read /dev/urandom") }
            if n == 0 { throw KeyToolError("short read from /dev/urandom") }
            filled += n
        }
        return out
    }

    /// Writes `bytes` to a new file created with mode 0600 (never widening an existing file's mode:
    /// an existing file is refused rather than overwritten). Atomic and durable: the bytes go to a
    /// temporary file beside `path`, flushed to the disk, which then takes its name; a failure (a full
    /// disk) leaves nothing, so the same command can be run again once the cause is fixed.
    public static func writePrivate(_ bytes: [UInt8], to path: String) throws {
        let staged = try PrivateFileStaging.stage(bytes, for: path)
        try staged.publish()
        try PrivateFileStaging.syncDirectory(of: path)
    }

    /// Creates a new secret key file and its IRK beside it: both, or (on any failure) neither. A key
    /// without its IRK would make every retry refuse ("already exists") and the wearable not start.
    public static func create(at path: String) throws {
        if FileManager.default.fileExists(atPath: path) {
            throw KeyToolError("\(path) already exists; refusing to overwrite a key")
        }
        if FileManager.default.fileExists(atPath: irkPath(for: path)) {
            throw KeyToolError("\(irkPath(for: path)) already exists; refusing to overwrite a key")
        }
        let key = try PrivateFileStaging.stage(try randomBytes(SimpleKeySchedule.secretKeySize), for: path)
        let irk: PrivateFileStaging
        do { irk = try PrivateFileStaging.stage(try randomBytes(irkSize), for: irkPath(for: path)) } catch {
            key.discard()
            throw error
        }
        do { try key.publish() } catch {
            irk.discard()
            throw error
        }
        do { try irk.publish() } catch {
            unlink(path)  // the key just published: its IRK could not join it
            throw error
        }
        try PrivateFileStaging.syncDirectory(of: path)
    }

    /// Reads a private file after checking nobody but the owner can read or write it.
    public static func readPrivate(_ path: String, expectedSize: Int, what: String) throws -> [UInt8] {
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw KeyToolError(FileProblem(path: path, action: "read", what: what, why: CommandMessage.strerrorText(errno)).description)
        }
        // The size first: a wrong file (a log, a disk image, /etc/passwd) is refused as not a key before
        // any advice to protect it (chmod 600 on a file that is no key would be bad advice), and
        // without being read into memory (an empty one without FoundationEssentials' reader, which
        // leaks its 4 KB buffer on an empty file: found by Fuzz/SecretKey.swift).
        guard st.st_size == expectedSize else {
            throw KeyToolError("\(what) \(path) has \(st.st_size) bytes, expected \(expectedSize)")
        }
        let mode = st.st_mode & 0o777
        if mode & 0o077 != 0 {
            throw KeyToolError("refusing \(what) \(path): mode \(String(mode, radix: 8, uppercase: false).leftPadded(to: 4)) lets others read it; run chmod 600 \(path)")
        }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw KeyToolError(FileProblem(path: path, action: "read", what: what, why: CommandMessage.reason(error)).description)
        }
        guard data.count == expectedSize else {
            throw KeyToolError("\(what) \(path) has \(data.count) bytes, expected \(expectedSize)")
        }
        return [UInt8](data)
    }

    public static func loadSecretKey(_ path: String) throws -> [UInt8] {
        try readPrivate(path, expectedSize: SimpleKeySchedule.secretKeySize, what: "secret key file")
    }

    public static func loadIRK(forSecretKey path: String) throws -> InlineArray<16, UInt8> {
        let b = try readPrivate(irkPath(for: path), expectedSize: irkSize, what: "IRK file")
        var irk = InlineArray<16, UInt8>(repeating: 0)
        for i in 0..<16 { irk[i] = b[i] }
        return irk
    }
}

extension String {
    func leftPadded(to n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}
