// What both images share above the BSP: the H4 output that writes to the HCI UART, the log line
// writer, and the main loop that drives `BluetoothStack` (bytes in → receive, time → tick).
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

    static func end() { Board.log.write(0x0A) }

    static func line(_ text: StaticString) { put(text); end() }
}

/// Writes H4 packets to the HCI UART and watches what comes back for the one event the images
/// report for timing: LE Set Advertising Enable completing (Core 5.4 Vol 4 Part E 7.8.9), i.e. the
/// moment the controller is advertising.
struct UARTH4Output: H4Output {
    var now: UInt64 = 0
    var advertisingSince: UInt64?
    var pendingAdvertisingEnable = false

    mutating func send(h4 packet: Span<UInt8>) {
        for i in packet.indices { Board.hci.write(packet[i]) }
        // Command packet: 0x01, opcode (LE), parameter length, parameters.
        if packet.count == 5, packet[0] == 0x01, packet[1] == 0x0A, packet[2] == 0x20 {
            pendingAdvertisingEnable = packet[4] == 1
        }
    }

    mutating func didReceive(h4 packet: Span<UInt8>) {
        // Command Complete: 0x04 0x0E len, credits, opcode (2), status.
        guard packet.count >= 7, packet[0] == 0x04, packet[1] == 0x0E, packet[4] == 0x0A, packet[5] == 0x20 else { return }
        if pendingAdvertisingEnable, packet[6] == 0, advertisingSince == nil {
            advertisingSince = now
            Log.put("advertising t="); Log.put(now); Log.put("ms stack_peak="); Log.put(Board.stackPeak); Log.end()
        }
        pendingAdvertisingEnable = false
    }
}

/// How long to wait before bringing a failed controller up again.
let restartDelay: UInt64 = 1_000

/// How often the main loop prints its memory line (the stack peak grows with what has happened).
let statusInterval: UInt64 = 2_000

/// Runs the stack forever: drains the HCI UART into `receive`, runs due timers on each millisecond
/// tick, sleeps until the next interrupt when idle.
func runStack<App: LEApplication, let links: Int, let attributes: Int, let values: Int>(
    _ stack: inout BluetoothStack<App, links, attributes, values>
) -> Never {
    // What the value is made of: type sizes, fixed when the image is built, so only a diagnostic
    // build prints them (`FIRMWARE_SWIFTFLAGS=-DFIRMWARE_MEMORY_DETAIL`; 156 B of flash otherwise).
    // The value's own size is on the `memory reserved` line (`Board.logReservation`).
    #if FIRMWARE_MEMORY_DETAIL
    Log.put("memory detail app_value="); Log.put(MemoryLayout<App>.size)
    Log.put(" hci="); Log.put(MemoryLayout<HCIHost>.size)
    Log.put(" control="); Log.put(MemoryLayout<App.Control>.size)
    Log.put(" database="); Log.put(MemoryLayout<GATTDatabase<attributes, values, links>>.size)
    Log.put(" link_state="); Log.put(MemoryLayout<LinkState<App.PrepareQueue, App.LinkBuffers.PDU>>.size); Log.put(" links="); Log.put(links); Log.end()
    #endif
    var clock = MillisecondClock()
    var output = UARTH4Output()
    output.now = Board.milliseconds(&clock)
    start(&stack, output: &output)
    var chunk = FixedBytes<64>()
    var nextStatus = statusInterval
    var lastPeak: UInt32 = 0
    var lastTick: UInt64 = 0
    var restartAt: UInt64?
    while true {
        chunk.removeAll()
        while chunk.count < 64, let byte = Board.hci.read() { chunk.append(byte) }
        output.now = Board.milliseconds(&clock)
        if chunk.count > 0 { receive(chunk.span, into: &stack, output: &output) }
        // Timers: SysTick wakes the loop every millisecond, and `tick` runs exactly what is due, so
        // ticking once per new millisecond is ticking at `nextDeadline` (at most 1 ms late). Asking
        // `stack.nextDeadline` itself costs more than it saves here: Swift 6.3 -Osize copies the
        // whole BluetoothStack (10.8 KB) into this frame to call the getter.
        if output.now != lastTick {
            lastTick = output.now
            tick(&stack, output: &output)
        }
        // A controller that failed (silent, asserted, hardware error) is brought up again after a
        // pause, as the host runtime does: firmware has no one to restart it by hand.
        if case .failed = stack.hci.state {
            if restartAt == nil { restartAt = output.now &+ restartDelay }
            if let at = restartAt, output.now >= at {
                restartAt = nil
                Log.line("controller: restarting bring-up")
                start(&stack, output: &output)
            }
        }
        if output.now >= nextStatus {
            nextStatus = output.now &+ statusInterval
            let peak = Board.stackPeak
            if peak != lastPeak {
                lastPeak = peak
                Log.put("memory stack_peak="); Log.put(peak); Log.put(" stack_size="); Log.put(Board.stackSize); Log.end()
            }
        }
        if chunk.count == 0 { Board.sleep() }
    }
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

// `receive` and `tick` out of line, each in a frame of its own: inlined into `runStack`, the
// temporaries of the one (an H4 packet assembled across chunks) and of the other (a GATT client's
// request on a timeout) were one frame that every path of the main loop started from.

@inline(never)
func receive<App: LEApplication, let links: Int, let attributes: Int, let values: Int>(
    _ bytes: Span<UInt8>, into stack: inout BluetoothStack<App, links, attributes, values>, output: inout UARTH4Output
) {
    stack.receive(bytes, now: output.now, output: &output)
}

/// Bring-up, at boot and after a failure: one copy of `BluetoothStack.start` (inlined at both call
/// sites it was two).
@inline(never)
func start<App: LEApplication, let links: Int, let attributes: Int, let values: Int>(
    _ stack: inout BluetoothStack<App, links, attributes, values>, output: inout UARTH4Output
) {
    stack.start(now: output.now, output: &output)
}

@inline(never)
func tick<App: LEApplication, let links: Int, let attributes: Int, let values: Int>(
    _ stack: inout BluetoothStack<App, links, attributes, values>, output: inout UARTH4Output
) {
    stack.tick(now: output.now, output: &output)
}
