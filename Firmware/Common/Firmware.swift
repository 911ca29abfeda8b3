// What every image shares above its port (the QEMU boards' BSP, or Zephyr): the log line writer
// and the image's constant GATT database. The port provides `Board.log` (bytes of log lines), the
// main loop and `halt` (BSP/Common/MainLoop.swift and Main.swift; Zephyr/swift/).
@_spi(UncheckedGATTTable) import BluetoothHost

/// Human-readable lines on the log UART, written a field at a time (no string formatting here).
enum Log {
    // Not inlined: on the micro:bit a byte goes out by a call (`bsp_log_byte`), so LLVM found the
    // loop cheap enough to copy into each of the images' 40-odd log calls (the CMSDK UART's wait
    // loop kept it out of line on mps2-an386).
    @inline(never)
    static func put(_ text: StaticString) {
        let p = text.utf8Start
        for i in 0..<text.utf8CodeUnitCount { Board.log.write(p[i]) }
    }

    /// Decimal, most significant digit first. Each digit by subtracting its power of ten, without
    /// `/` or `%`: Armv6-M has no divider, and these were the micro:bit images' only divisions (the
    /// division routine they linked, 66 B, and the digit buffer cost 70 B more than this).
    static func put(_ value: UInt32) {
        var v = value
        var exponent = 0
        var power: UInt32 = 1
        // 10^9 is the largest power of ten below 2^32.
        while exponent < 9, power &* 10 <= v { power &*= 10; exponent += 1 }
        while true {
            var digit: UInt8 = 0x30
            while v >= power { v &-= power; digit &+= 1 }
            Board.log.write(digit)
            if exponent == 0 { return }
            exponent -= 1
            power = 1
            for _ in 0..<exponent { power &*= 10 }
        }
    }

    static func put(_ value: UInt64) { put(UInt32(truncatingIfNeeded: value)) }
    static func put(_ value: UInt16) { put(UInt32(truncatingIfNeeded: value)) }
    static func put(_ value: Int) { put(UInt32(truncatingIfNeeded: value)) }

    static func put(hex bytes: Span<UInt8>) {
        for i in bytes.indices { putHex(bytes[i]) }
    }

    @inline(never)
    static func putHex(_ b: UInt8) {
        let digits: StaticString = "0123456789abcdef"
        Board.log.write(digits.utf8Start[Int(b &>> 4)])
        Board.log.write(digits.utf8Start[Int(b & 0x0F)])
    }

    /// Bluetooth addresses are shown most significant octet first, as people read them.
    static func put(address: BDAddress) {
        let bytes = address.bytes
        var i = 5
        while true {
            putHex(bytes[i])
            if i == 0 { break }
            Board.log.write(0x3A)
            i -= 1
        }
    }

    static func put(byte: UInt8) { Board.log.write(byte) }

    static func end() { Board.log.write(0x0A) }

    static func line(_ text: StaticString) { put(text); end() }
}

@_silgen_name("firmware_gatt_table") func firmwareGATTTable() -> UnsafePointer<UInt8>
@_silgen_name("firmware_gatt_table_size") func firmwareGATTTableSize() -> UInt32

/// The image's GATT database: the constant table its gatt_table.c keeps in flash (generated from the
/// builder's database by Tests/HeraldTests/FirmwareGATTTableTests.swift), served in place, with
/// the per-link values in the stack. Not checked here (`init(trustedTable:)`): the test fails unless
/// the checked-in table is byte for byte what the builder writes, serves it through the ATT server
/// for every handle, and checks that the image's stack type gives it the per-link octets it needs.
/// Checked at each start-up (`init(table:)`), the same constant cost 274 B of flash. Always true
/// (the signature `BluetoothStack.initialize(_:configuration:database:app:)` asks for).
@inline(never)
func makeDatabase<let values: Int, let links: Int>(into database: UnsafeMutablePointer<GATTDatabase<0, values, links>>) -> Bool {
    let table = UnsafeBufferPointer(start: firmwareGATTTable(), count: Int(firmwareGATTTableSize()))
    database.initialize(to: GATTDatabase<0, values, links>(trustedTable: table))
    return true
}
