import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private file (mode 0600) written in full under a temporary name in its final directory, flushed
/// to the disk (fsync) and closed with `close`'s result checked, before it takes its name.
///
/// Why: a key written in place can be left partial or empty by a full disk or a crash, and an
/// existing key file is never overwritten, so a partial one would block every retry. Only a file
/// whose every byte reached the disk is given its name. The name is taken with link(2), which, unlike
/// rename(2), refuses an existing name (the no-overwrite promise holds even against a race); on a file
/// system without hard links, rename(2) after checking the name is free.
struct PrivateFileStaging {
    let temporary: String
    let path: String

    static func stage(_ bytes: [UInt8], for path: String) throws -> PrivateFileStaging {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        var template = Array(((directory.isEmpty ? "." : directory) + "/." + name + ".tmp-XXXXXX").utf8CString)
        // mkstemp creates the file 0600 and O_EXCL.
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw problem(path, "create", errno) }
        let temporary = String(cString: template)
        func fail(_ action: String, _ code: Int32, closing: Bool = true) -> KeyToolError {
            if closing { _ = close(fd) }
            unlink(temporary)
            return problem(path, action, code)
        }
        // umask cannot add bits, but make the mode explicit anyway.
        guard fchmod(fd, 0o600) == 0 else { throw fail("create", errno) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes.count - written) }
            if n < 0 {
                if errno == EINTR { continue }
                throw fail("write", errno)
            }
            written += n
        }
        guard fsync(fd) == 0 else { throw fail("write", errno) }
        // close reports a delayed write error (NFS, some FUSE): the file is not known to be whole then.
        guard close(fd) == 0 else { throw fail("write", errno, closing: false) }
        return PrivateFileStaging(temporary: temporary, path: path)
    }

    /// Gives the file its name; refuses an existing one. The temporary name is gone either way.
    func publish() throws {
        defer { unlink(temporary) }
        if link(temporary, path) == 0 { return }
        let code = errno
        if code == EEXIST { throw KeyToolError("\(path) already exists; refusing to overwrite a key") }
        guard code == EPERM || code == ENOTSUP || code == EOPNOTSUPP || code == ENOSYS else { throw Self.problem(path, "create", code) }
        // No hard links here (FAT, some FUSE): rename, which replaces, once the name is free.
        if access(path, F_OK) == 0 { throw KeyToolError("\(path) already exists; refusing to overwrite a key") }
        guard rename(temporary, path) == 0 else { throw Self.problem(path, "create", errno) }
    }

    func discard() { unlink(temporary) }

    /// Flushes the directory entry (the new name) to the disk: without it a crash can lose a key
    /// whose bytes were flushed.
    static func syncDirectory(of path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { throw problem(path, "write", errno) }
        // Some file systems cannot sync a directory (EINVAL): nothing more can be done there.
        if fsync(fd) != 0, errno != EINVAL {
            let code = errno
            _ = close(fd)
            throw problem(path, "write", code)
        }
        _ = close(fd)
    }

    static func problem(_ path: String, _ action: String, _ code: Int32) -> KeyToolError {
        KeyToolError(FileProblem(path: path, action: action, why: CommandMessage.strerrorText(code)).description)
    }
}
