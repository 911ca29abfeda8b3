import Foundation
import Testing
@testable import HeraldRuntime
#if canImport(Glibc)
import Glibc
#endif

/// Key files on a full disk (issue 36, item 9): a write that fails leaves nothing behind, so the same
/// command succeeds once there is room, and a key is either whole or absent. The disk is a tmpfs of
/// 8 KB (two 4 KB pages; each file, key or IRK, takes one), mounted for the test.
@Suite(.serialized) struct KeyFileFullDiskTests {
    /// A tmpfs mounted on a fresh directory; the test is cancelled (skipped) with the reason when
    /// mounting is not permitted (not root, or no CAP_SYS_ADMIN in a container).
    final class SmallDisk {
        let path: String

        private init(path: String) { self.path = path }

        static func mount(size: String = "8k") throws -> SmallDisk {
            var template = Array((FileManager.default.temporaryDirectory.path + "/herald-fulldisk-XXXXXX").utf8CString)
            guard let made = mkdtemp(&template) else { throw KeyToolError("mkdtemp failed") }
            let path = String(cString: made)
            guard Glibc.mount("tmpfs", path, "tmpfs", 0, "size=\(size)") == 0 else {
                let why = String(cString: strerror(errno))
                rmdir(path)
                try Test.cancel("cannot mount a \(size) tmpfs to fill (\(why)); run as root to test a full disk")
            }
            return SmallDisk(path: path)
        }

        deinit {
            umount(path)
            rmdir(path)
        }

        /// Fills the disk with one file, leaving `pagesFree` 4 KB pages; returns the filler's path.
        @discardableResult
        func fill(leaving pagesFree: Int) throws -> String {
            let filler = path + "/filler"
            let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            guard fd >= 0 else { throw KeyToolError("cannot create the filler") }
            let page = [UInt8](repeating: 0xAA, count: 4096)
            var pages = 0
            while page.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == 4096 { pages += 1 }
            // Give back the pages wanted (ftruncate frees whole pages of a tmpfs file).
            guard ftruncate(fd, off_t(max(0, pages - pagesFree) * 4096)) == 0 else { throw KeyToolError("ftruncate failed") }
            close(fd)
            return filler
        }

        var names: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }
    }

    @Test func aKeyThatDoesNotFitLeavesNoFileAndTheRetrySucceeds() throws {
        let disk = try SmallDisk.mount()
        let filler = try disk.fill(leaving: 0)
        let key = disk.path + "/device.key"
        #expect(throws: KeyToolError.self) { try SecretKeyFile.create(at: key) }
        do { try SecretKeyFile.create(at: key) } catch {
            #expect("\(error)".contains("no space left on device"), "\(error)")
            // The retry is refused for want of space, never as "already exists".
            #expect(!"\(error)".contains("already exists"), "\(error)")
        }
        #expect(disk.names == ["filler"], "a failed write left \(disk.names)")

        unlink(filler)
        try SecretKeyFile.create(at: key)
        #expect(try SecretKeyFile.loadSecretKey(key).count == 2048)
        _ = try SecretKeyFile.loadIRK(forSecretKey: key)
        #expect(disk.names == ["device.key", "device.key.irk"])
    }

    @Test func anIRKThatDoesNotFitTakesItsKeyWithItAndTheRetrySucceeds() throws {
        // Room for the 2,048-byte key (one page) but not for the IRK beside it: a key without its
        // IRK would block the retry ("already exists") and leave the wearable unable to start.
        let disk = try SmallDisk.mount()
        let filler = try disk.fill(leaving: 1)
        let key = disk.path + "/device.key"
        do {
            try SecretKeyFile.create(at: key)
            Issue.record("created a key pair on a disk with room for one file")
        } catch {
            #expect("\(error)".contains("no space left on device"), "\(error)")
            #expect("\(error)".contains("device.key.irk"), "\(error)")
        }
        #expect(disk.names == ["filler"], "a failed write left \(disk.names)")

        unlink(filler)
        try SecretKeyFile.create(at: key)
        #expect(try SecretKeyFile.loadSecretKey(key).count == 2048)
        _ = try SecretKeyFile.loadIRK(forSecretKey: key)
    }

    @Test func aSingleFileThatDoesNotFitLeavesNothing() throws {
        let disk = try SmallDisk.mount()
        let filler = try disk.fill(leaving: 0)
        let path = disk.path + "/other.key"
        #expect(throws: KeyToolError.self) { try SecretKeyFile.writePrivate([UInt8](repeating: 7, count: 2048), to: path) }
        #expect(disk.names == ["filler"], "a failed write left \(disk.names)")
        unlink(filler)
        try SecretKeyFile.writePrivate([UInt8](repeating: 7, count: 2048), to: path)
        #expect(try SecretKeyFile.readPrivate(path, expectedSize: 2048, what: "key") == [UInt8](repeating: 7, count: 2048))
    }
}
