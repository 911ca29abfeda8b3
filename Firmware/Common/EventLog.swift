// Events as the project prints them: one JSON object a line, keys in sorted order, as
// `herald wearable --json` (WearableEventHub) and `herald beacon --json` (PeripheralEventPrinter)
// write them, so a test or a person reads a chip's log and the CLI's alike. Written by hand a field
// at a time through `Log` (no Foundation, no formatting buffer): each event is a handful of string
// constants and the hex, decimal, Base64 and date writers below.
import BluetoothHost
import Herald

/// The time of the event being reported. The board has no clock: the port's main loop sets `now`
/// (stack milliseconds since reset) before each call into the stack, and the Unix time at reset is
/// a build option (Common/options.c).
enum EventTime {
    nonisolated(unsafe) static var now: UInt64 = 0
}

@_silgen_name("firmware_unix_time_at_reset") func firmwareUnixTimeAtReset() -> Int64

enum EventLog {
    /// `{"event":"NAME"` — for events whose every other key sorts after "event".
    static func open(_ name: StaticString) {
        Log.put("{\"event\":\""); Log.put(name); Log.put("\"")
    }

    /// `,"time":"…"}` and the line's end: every object's last key.
    static func close() {
        Log.put(",\"time\":\""); putTime(); Log.put("\"}"); Log.end()
    }

    /// `,"target":"T<n>"`, the runtime's target names (`WearableEventHub.targetName`).
    static func target(_ t: TargetIdentifier) {
        Log.put(",\"target\":\"T"); Log.put(t.value); Log.put("\"")
    }

    /// `,"KEY":"<lower-case hex>"`
    static func hex(_ key: StaticString, _ bytes: Span<UInt8>) {
        Log.put(key); Log.put(hex: bytes); Log.put("\"")
    }

    /// A signed decimal (RSSI, tx power).
    static func put(signed value: Int16) {
        if value < 0 { Log.put("-"); Log.put(UInt32(truncatingIfNeeded: -Int32(truncatingIfNeeded: value))) } else { Log.put(UInt32(truncatingIfNeeded: value)) }
    }

    /// The link fields of the peripheral's events, `,"handle":N,"peer":"AA:…","role":"…"`; a caller
    /// with keys that sort between them writes the three parts itself.
    static func link(_ link: HeraldLink) {
        handle(link); peer(link); role(link)
    }
    static func handle(_ link: HeraldLink) { Log.put(",\"handle\":"); Log.put(link.handle) }
    static func peer(_ link: HeraldLink) { Log.put(",\"peer\":\""); putAddress(link.peer.address); Log.put("\"") }
    static func role(_ link: HeraldLink) { Log.put(link.role == .peripheral ? ",\"role\":\"peripheral\"" : ",\"role\":\"central\"") }

    /// An address as the runtime writes it: most significant octet first, upper-case hex.
    static func putAddress(_ address: BDAddress) {
        let digits: StaticString = "0123456789ABCDEF"
        let bytes = address.bytes
        var i = 5
        while true {
            Log.put(byte: digits.utf8Start[Int(truncatingIfNeeded: bytes[i] &>> 4)])
            Log.put(byte: digits.utf8Start[Int(truncatingIfNeeded: bytes[i] & 0x0F)])
            if i == 0 { break }
            Log.put(":")
            i -= 1
        }
    }

    /// The runtime's `payloadShortName`: Base64 of the payload after its 3-octet header, first 6
    /// characters (of a payload of 3 octets or fewer, all of it).
    static func putShortName(_ bytes: Span<UInt8>) {
        if bytes.count <= 3 {
            putBase64(bytes, from: 0, to: bytes.count, limit: 8)
        } else {
            putBase64(bytes, from: 3, to: min(bytes.count, 9), limit: 6)
        }
    }

    /// Base64 (RFC 4648, with padding) of `bytes[from..<to]`, at most `limit` characters.
    static func putBase64(_ bytes: Span<UInt8>, from: Int, to: Int, limit: Int) {
        let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        var written = 0
        var i = from
        while i < to, written < limit {
            let n = min(3, to - i)
            var group = UInt32(truncatingIfNeeded: bytes[i]) << 16
            if n > 1 { group |= UInt32(truncatingIfNeeded: bytes[i + 1]) << 8 }
            if n > 2 { group |= UInt32(truncatingIfNeeded: bytes[i + 2]) }
            for k in 0..<4 where written < limit {
                if k <= n {
                    Log.put(byte: alphabet.utf8Start[Int(truncatingIfNeeded: (group >> UInt32(truncatingIfNeeded: 18 - 6 * k)) & 0x3F)])
                } else {
                    Log.put(byte: 0x3D)  // "="
                }
                written += 1
            }
            i += n
        }
    }

    /// ISO 8601 UTC with milliseconds (`2026-01-11T01:00:00.123Z`), the runtime's `ISO8601DateFormatter`
    /// with fractional seconds. Civil date from days since 1970 (H. Hinnant's algorithm), in 32-bit
    /// arithmetic: Unix seconds fit a UInt32 until 2106. The milliseconds since reset are split into
    /// seconds without a 64-bit division, which on the Cortex-M is a runtime call (`__aeabi_ldivmod`
    /// and its helpers, 270 B of flash that nothing else used).
    static func putTime() {
        let now = EventTime.now
        let sinceReset = secondsIn(milliseconds: now)
        let seconds = UInt32(truncatingIfNeeded: firmwareUnixTimeAtReset() &+ Int64(bitPattern: sinceReset))
        let ms = UInt32(truncatingIfNeeded: now &- sinceReset &* 1000)
        let days = seconds / 86_400
        let secondOfDay = seconds % 86_400
        let z = days + 719_468
        let era = z / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        Log.put(year); Log.put("-"); put2(month); Log.put("-"); put2(day)
        Log.put("T"); put2(secondOfDay / 3600); Log.put(":"); put2(secondOfDay / 60 % 60); Log.put(":"); put2(secondOfDay % 60)
        Log.put("."); putDigits(ms, 3); Log.put("Z")
    }

    /// `ms / 1000` by long division in 32-bit steps: `ms / 8 / 125`, its upper bits first, then the
    /// remainder (below 125) with the low 16 bits. Exact for `ms` below 2^51 (71,000 years).
    static func secondsIn(milliseconds ms: UInt64) -> UInt64 {
        let eighths = ms &>> 3
        let high = UInt32(truncatingIfNeeded: eighths &>> 16)
        let low = (high % 125) &<< 16 | UInt32(truncatingIfNeeded: eighths & 0xFFFF)
        return UInt64(widening: high / 125) &<< 16 | UInt64(widening: low / 125)
    }

    static func put2(_ v: UInt32) { putDigits(v, 2) }

    /// `v` in exactly `width` decimal digits (leading zeros).
    static func putDigits(_ v: UInt32, _ width: Int) {
        var power: UInt32 = 1
        for _ in 1..<width { power &*= 10 }
        var rest = v
        while power > 0 {
            Log.put(byte: UInt8(truncatingIfNeeded: 0x30 &+ rest / power))
            rest %= power
            power /= 10
        }
    }
}
