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
    // `open`, `close`, `target`, `hex`, `handle` and `peer` out of line: each is a few calls of
    // `Log`, but inlined into the 20-odd events (and LLVM then inlined the events into the stack's
    // callbacks) they were copied everywhere (wearable -1,392 B and -116 B, beacon -104 B and -36 B).
    /// `{"event":"NAME"` — for events whose every other key sorts after "event".
    @inline(never)
    static func open(_ name: StaticString) {
        Log.put("{\"event\":\""); Log.put(name); Log.put("\"")
    }

    /// `,"time":"…"}` and the line's end: every object's last key.
    @inline(never)
    static func close() {
        Log.put(",\"time\":\""); putTime(); Log.put("\"}"); Log.end()
    }

    /// `,"target":"T<n>"`, the runtime's target names (`WearableEventHub.targetName`).
    @inline(never)
    static func target(_ t: TargetIdentifier) {
        Log.put(",\"target\":\"T"); Log.put(t.value); Log.put("\"")
    }

    /// `,"KEY":"<lower-case hex>"`
    @inline(never)
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
    @inline(never)
    static func handle(_ link: HeraldLink) { Log.put(",\"handle\":"); Log.put(link.handle) }
    @inline(never)
    static func peer(_ link: HeraldLink) { Log.put(",\"peer\":\""); putAddress(link.peer.address); Log.put("\"") }
    static func role(_ link: HeraldLink) { Log.put(link.role == .peripheral ? ",\"role\":\"peripheral\"" : ",\"role\":\"central\"") }

    /// An address as the runtime writes it: most significant octet first, upper-case hex. Each
    /// octet by a constant index, handed to a function out of line: indexed by a variable, the
    /// address was put back on the stack octet by octet for each digit (64 B of frame on the
    /// micro:bit beacon's deepest main-loop path, under the payload-read event, and 140 B of code).
    static func putAddress(_ address: BDAddress) {
        let bytes = address.bytes
        putUpperHex(bytes[5]); putColonHex(bytes[4]); putColonHex(bytes[3])
        putColonHex(bytes[2]); putColonHex(bytes[1]); putColonHex(bytes[0])
    }

    @inline(never)
    static func putColonHex(_ byte: UInt8) {
        Log.put(byte: 0x3A)  // ":"
        putUpperHex(byte)
    }

    @inline(never)
    static func putUpperHex(_ byte: UInt8) {
        let digits: StaticString = "0123456789ABCDEF"
        Log.put(byte: digits.utf8Start[Int(truncatingIfNeeded: byte &>> 4)])
        Log.put(byte: digits.utf8Start[Int(truncatingIfNeeded: byte & 0x0F)])
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
    /// with fractional seconds, in 32-bit arithmetic: Unix seconds fit a UInt32 until 2106. The
    /// milliseconds since reset are split into seconds without a 64-bit division, which on the
    /// Cortex-M is a runtime call (`__aeabi_ldivmod` and its helpers, 270 B of flash that nothing
    /// else used). One division by the day; the year, month, hours and minutes by counting up, at
    /// most 136 years, 12 months, 23 hours and 59 minutes of subtractions (Armv6-M has no divider,
    /// and H. Hinnant's civil date, eleven divisions by constants, was 652 B of the micro:bit
    /// beacon). Within 1970-2106 every fourth year is a leap year but 2100 (Gregorian calendar).
    /// Checked against that algorithm for every day of the range (docs/footprint.md).
    static func putTime() {
        let now = EventTime.now
        let sinceReset = secondsIn(milliseconds: now)
        let seconds = UInt32(truncatingIfNeeded: firmwareUnixTimeAtReset() &+ Int64(bitPattern: sinceReset))
        // Below 1,000, so the low 32 bits suffice: no 64-bit multiplication (`__aeabi_lmul`).
        let ms = UInt32(truncatingIfNeeded: now) &- UInt32(truncatingIfNeeded: sinceReset) &* 1000
        var days = seconds / 86_400
        var rest = seconds &- days &* 86_400
        var year: UInt32 = 1970
        while days >= (isLeap(year) ? 366 : 365) {
            days &-= isLeap(year) ? 366 : 365
            year &+= 1
        }
        let lengths = monthLengths.utf8Start
        var month: UInt32 = 1
        while true {
            let length = UInt32(lengths[Int(month &- 1)]) &+ (month == 2 && isLeap(year) ? 1 : 0)
            if days < length { break }
            days &-= length
            month &+= 1
        }
        Log.put(year); put2(0x2D, month); put2(0x2D, days &+ 1)  // "-"
        var hours: UInt32 = 0
        while rest >= 3600 { rest &-= 3600; hours &+= 1 }
        var minutes: UInt32 = 0
        while rest >= 60 { rest &-= 60; minutes &+= 1 }
        put2(0x54, hours); put2(0x3A, minutes); put2(0x3A, rest)  // "T", ":"
        Log.put(".")
        if ms < 100 { Log.put(byte: 0x30) }
        put2(ms)
        Log.put("Z")
    }

    /// `separator`, then `v` (below 1,000) in at least two decimal digits. Out of line: the date's
    /// five fields each wrote their separator and digits in line (68 B of the micro:bit beacon).
    @inline(never)
    static func put2(_ separator: UInt8, _ v: UInt32) {
        Log.put(byte: separator)
        put2(v)
    }

    /// January to December's days in a common year.
    static let monthLengths: StaticString = "\u{1F}\u{1C}\u{1F}\u{1E}\u{1F}\u{1E}\u{1F}\u{1F}\u{1E}\u{1F}\u{1E}\u{1F}"

    static func isLeap(_ year: UInt32) -> Bool { year & 3 == 0 && year != 2100 }

    /// `ms / 1000` by long division in 32-bit steps: `ms / 8 / 125`, its upper bits first, then the
    /// remainder (below 125) with the low 16 bits. Exact for `ms` below 2^51 (71,000 years).
    static func secondsIn(milliseconds ms: UInt64) -> UInt64 {
        let eighths = ms &>> 3
        let high = UInt32(truncatingIfNeeded: eighths &>> 16)
        let low = (high % 125) &<< 16 | UInt32(truncatingIfNeeded: eighths & 0xFFFF)
        return UInt64(widening: high / 125) &<< 16 | UInt64(widening: low / 125)
    }

    /// `v` (below 1,000) in at least two decimal digits.
    static func put2(_ v: UInt32) {
        if v < 10 { Log.put(byte: 0x30) }
        Log.put(v)
    }
}
