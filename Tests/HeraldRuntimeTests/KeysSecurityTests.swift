import Testing
import Foundation
import Herald
@testable import HeraldRuntime

/// Issue 7 "Security" for the key tools (KeysTests covers creation at 0600 and refusal of 0644/0604):
/// secrets never appear in errors or warnings, creation does not depend on the umask, and group
/// access is refused as well as world access, for the IRK file too.
@Suite(.serialized) struct KeysSecurityTests {
    /// Every way the secret or IRK could be spelled in a message: hex (any 6-byte window), base64 of
    /// the whole and of 3-byte-aligned 12-byte windows, and Swift's array description of a prefix.
    static func spellings(of secret: [UInt8]) -> [String] {
        var out: [String] = []
        out.append(Data(secret).base64EncodedString())
        for i in stride(from: 0, to: secret.count - 12, by: 3) {
            out.append(Data(secret[i..<(i + 12)]).base64EncodedString())
        }
        for i in 0..<(secret.count - 6) {
            let w = secret[i..<(i + 6)]
            out.append(w.map { String(format: "%02x", $0) }.joined())
            out.append(w.map { String(format: "%02X", $0) }.joined())
        }
        out.append(secret.prefix(4).map(String.init).joined(separator: ", "))
        return out
    }

    static func expectNoSecret(_ text: String, _ spellings: [String], _ what: String) {
        for s in spellings where text.contains(s) {
            Issue.record("\(what) contains secret material (\(s)): \(text)")
            return
        }
    }

    static func message(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch { return String(describing: error) }
    }

    @Test func errorsAndWarningsNeverContainSecretBytes() throws {
        let dir = try temporaryDirectory()
        let path = dir.appendingPathComponent("s.key").path
        try SecretKeyFile.create(at: path)
        let secret = try SecretKeyFile.loadSecretKey(path)
        let irkInline = try SecretKeyFile.loadIRK(forSecretKey: path)
        let irk = (0..<16).map { irkInline[$0] }
        let forbidden = Self.spellings(of: secret) + Self.spellings(of: irk)
        let header = PayloadHeader(protocolAndVersion: 0x10, countryCode: 826, stateCode: 1)

        var messages: [String?] = []
        messages.append(Self.message { try SecretKeyFile.create(at: path) })
        chmod(path, 0o644)
        messages.append(Self.message { _ = try SecretKeyFile.loadSecretKey(path) })
        chmod(path, 0o600)
        chmod(SecretKeyFile.irkPath(for: path), 0o640)
        messages.append(Self.message { _ = try SecretKeyFile.loadIRK(forSecretKey: path) })
        let short = dir.appendingPathComponent("short.key").path
        try SecretKeyFile.writePrivate(Array(secret.prefix(2047)), to: short)
        messages.append(Self.message { _ = try SecretKeyFile.loadSecretKey(short) })
        messages.append(Self.message { _ = try KeyTools.derive(secretKey: secret, day: 3, period: 241, header: header, order: .bigEndian) })
        messages.append(Self.message { _ = try KeyTools.derive(secretKey: secret, day: 9_999, period: 1, header: header, order: .bigEndian) })
        messages.append(Self.message { _ = try KeyTools.derive(secretKey: Array(secret.prefix(100)), day: 1, period: 1, header: header, order: .bigEndian) })
        messages.append(Self.message {
            _ = try KeyTools.derive(secretKey: secret, day: 1, period: 1,
                                    header: PayloadHeader(protocolAndVersion: 0xFF, countryCode: 0, stateCode: 0), order: .bigEndian)
        })
        messages.append(Self.message {
            _ = try KeyTools.exportMatchingKeys(secretKey: secret, epoch: .reference, from: 100, to: 50)
        })
        messages.append(Self.message {
            _ = try KeyTools.exportMatchingKeys(secretKey: secret, epoch: .reference,
                                                from: try KeyTools.parseTime("2026-11-20"), to: try KeyTools.parseTime("2026-11-21"))
        })
        let errors = messages.compactMap { $0 }
        #expect(errors.count == messages.count, "every misuse above must be an error")
        for e in errors { Self.expectNoSecret(e, forbidden, "error") }

        // Warnings and the derived values printed by `keys derive` / `keys export` are not the secret.
        let near = try KeyTools.exportMatchingKeys(secretKey: secret, epoch: .standard,
                                                   from: KeyTools.parseTime("2031-06-01"), to: KeyTools.parseTime("2031-06-02"))
        Self.expectNoSecret(near.warning ?? "", forbidden, "warning")
        Self.expectNoSecret(near.csv, forbidden, "export")
        let derived = try KeyTools.derive(secretKey: secret, day: 3, period: 17, header: header, order: .bigEndian)
        Self.expectNoSecret(String(describing: derived), forbidden, "derive output")
    }

    @Test func creationIsOwnerOnlyWhateverTheUmask() throws {
        let dir = try temporaryDirectory()
        let path = dir.appendingPathComponent("u.key").path
        let old = umask(0)
        defer { umask(old) }
        try SecretKeyFile.create(at: path)
        #expect(try mode(path) == 0o600)
        #expect(try mode(SecretKeyFile.irkPath(for: path)) == 0o600)
        let other = dir.appendingPathComponent("w.key").path
        try SecretKeyFile.writePrivate([1, 2, 3], to: other)
        #expect(try mode(other) == 0o600)
    }

    @Test(arguments: [0o640, 0o620, 0o660, 0o440, 0o604, 0o602, 0o666, 0o700 | 0o044])
    func groupOrOtherAccessIsRefused(permissions: Int) throws {
        let dir = try temporaryDirectory()
        let path = dir.appendingPathComponent("g.key").path
        try SecretKeyFile.create(at: path)
        let irk = SecretKeyFile.irkPath(for: path)
        chmod(path, mode_t(permissions))
        #expect(throws: KeyToolError.self) { _ = try SecretKeyFile.loadSecretKey(path) }
        chmod(path, 0o600)
        chmod(irk, mode_t(permissions))
        #expect(throws: KeyToolError.self) { _ = try SecretKeyFile.loadIRK(forSecretKey: path) }
        chmod(irk, 0o400)
        #expect(try SecretKeyFile.loadSecretKey(path).count == 2048)
        _ = try SecretKeyFile.loadIRK(forSecretKey: path)
    }
}
