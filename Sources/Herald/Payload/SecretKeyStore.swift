/// Where a device's 2,048-octet Herald secret key lives (Herald Simple payload specification: the
/// key from which every day key and contact identifier is derived).
///
/// Why a protocol: a phone-class host keeps the key in RAM, but a microcontroller keeps it in flash
/// and has no RAM to spare for it. The sensor needs the key twice (the central's payload supplier and
/// the peripheral's payload characteristic); held inline that is 4 KiB, a quarter of a wearable's
/// RAM budget. `StaticSecretKey` reads it in place instead.
public protocol SecretKeyStore {
    /// Calls `body` with the 2,048 key octets.
    func withSecretKey<R>(_ body: (Span<UInt8>) -> R) -> R
}

/// The key held inline (2 KiB), copied in once.
public struct InlineSecretKey: SecretKeyStore {
    var bytes: InlineArray<2048, UInt8>

    /// nil unless `key` is exactly `SimpleKeySchedule.secretKeySize` (2,048) octets.
    public init?(_ key: Span<UInt8>) {
        guard key.count == SimpleKeySchedule.secretKeySize else { return nil }
        bytes = InlineArray(repeating: 0)
        for i in 0..<2048 { bytes[i] = key[i] }
    }

    public func withSecretKey<R>(_ body: (Span<UInt8>) -> R) -> R {
        let key = bytes
        return body(key.span)
    }
}

/// A key in memory that lives as long as the program and never changes — on a microcontroller, the
/// key in flash — read in place, so it costs no RAM.
public struct StaticSecretKey: SecretKeyStore {
    let start: UnsafePointer<UInt8>

    /// `start` must address 2,048 octets that stay valid and unchanged for the program's lifetime.
    public init(unsafeStart start: UnsafePointer<UInt8>) { self.start = start }

    public func withSecretKey<R>(_ body: (Span<UInt8>) -> R) -> R {
        body(Span(_unsafeStart: start, count: SimpleKeySchedule.secretKeySize))
    }
}
