import BluetoothHost

/// The Herald reference apps' Apple device filter: Apple devices whose advert alone says they cannot
/// host the Herald service (Apple TV, Macs, AirPods and other accessories) are ignored, not connected
/// to for GATT discovery (herald-for-android `BLESensorConfiguration.deviceFilterFeaturePatterns`,
/// `BLEDeviceFilter`; herald-for-ios has the same list).
///
/// Apple's manufacturer data (company 0x004C) holds messages: type 0x01 is the legacy "overflow
/// area" and runs to the end; every other type is type, length, data (a length past the end is cut
/// to what is there, as the reference parser does). Each pattern is matched against the start of a
/// message's hexadecimal text, `.` standing for any digit, case-insensitively, exactly as the apps'
/// `^…` regular expressions are. A device is ignored when any message matches any pattern.
public enum AppleDeviceFilter {
    /// The reference patterns without their `^` (all are anchored at the start of a message).
    public static let patterns: InlineArray<16, StaticString> = [
            "10....04",  // Nearby Info, action 0x04 / 0x14: Apple TV and similar, never a phone with an app
            "10....14",
            "0100000000000000000000000000000000",  // overflow area with no service bits: no app advertising
            "05", "07", "09",  // AirDrop; proximity pairing (AirPods, Beats); AirPlay target
            "00",
            "1002",
            "06", "08", "03",  // HomeKit; "Hey Siri"; AirPrint
            "0C", "0D", "0F", "0E", "0B",  // Handoff, tethering target/source, Nearby Action, watch
        ]

    /// The index in `patterns` of the first pattern matching a message in `appleData` (the
    /// manufacturer data after Apple's company ID), nil when none does.
    public static func firstMatch(inAppleData appleData: Span<UInt8>) -> Int? {
        var position = 0
        while position < appleData.count {
            let end: Int
            if appleData[position] == 0x01 {
                end = appleData.count
            } else {
                // A type octet with no length octet after it ends the data (the reference parser stops there).
                guard position + 1 < appleData.count else { return nil }
                end = min(appleData.count, position + 2 + Int(appleData[position + 1]))
            }
            let message = appleData.extracting(position..<end)
            let all = patterns
            for i in 0..<all.count where matches(all[i], message) { return i }
            position = end
        }
        return nil
    }

    /// Whether `message`'s hexadecimal text starts with `pattern` (`.` matches any digit).
    public static func matches(_ pattern: StaticString, _ message: Span<UInt8>) -> Bool {
        let digits = pattern.utf8CodeUnitCount
        guard digits <= message.count * 2 else { return false }
        let text = pattern.utf8Start
        for i in 0..<digits {
            let c = text[i]
            if c == UInt8(ascii: ".") { continue }
            let octet = message[i / 2]
            let nibble = i % 2 == 0 ? octet >> 4 : octet & 0x0F
            guard let value = hexValue(c), value == nibble else { return false }
        }
        return true
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}
