import Foundation
import Herald

/// The contact identifier of `herald wearable --payload test`. Each wearable gets its own: one fixed
/// identifier for every wearable gave them all one payload short name, so the analysis could not tell
/// whose readings were whose (two wearables reading each other scored 0 % with no warning).
public enum TestPayloadIdentity {
    /// The identifier `--test-identifier` gave before each device had its own (00 01 … 0f).
    public static var legacy: ContactIdentifier {
        var id = ContactIdentifier(repeating: 0)
        for i in 0..<16 { id[i] = UInt8(i) }
        return id
    }

    /// The first 16 octets of SHA-256 of the device name and the log directory's absolute path: stable
    /// across restarts of one wearable, different for two wearables on one host (they cannot share a
    /// log directory) or on two hosts.
    public static func derived(deviceName: String, logDirectory: String) -> ContactIdentifier {
        let path = URL(fileURLWithPath: logDirectory).standardizedFileURL.path
        let input = Array("herald test payload\u{0}\(deviceName)\u{0}\(path)".utf8)
        let digest = SHA256.hash(input.span)
        var id = ContactIdentifier(repeating: 0)
        for i in 0..<16 { id[i] = digest[i] }
        return id
    }

    /// 32 hexadecimal digits.
    public static func parse(_ hex: String) -> ContactIdentifier? {
        let digits = Array(hex.utf8)
        guard digits.count == 32 else { return nil }
        var id = ContactIdentifier(repeating: 0)
        for i in 0..<16 {
            guard let b = hexOctet(digits[2 * i], digits[2 * i + 1]) else { return nil }
            id[i] = b
        }
        return id
    }
}
