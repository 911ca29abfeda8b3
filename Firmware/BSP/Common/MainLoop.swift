// The QEMU boards' main loop: the H4 output that writes to the HCI UART, and the loop that drives
// `BluetoothStack` (UART bytes in → receive, each millisecond → tick, sleep when idle).
@_spi(UncheckedGATTTable) import BluetoothHost

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
func runStack<App: LEApplication, let links: Int, let attributes: Int, let values: Int, let framerOctets: Int>(
    _ stack: inout BluetoothStackOf<App, links, attributes, values, framerOctets>
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
    // The UART's bytes in reads of up to 23: this frame is under every path of the main loop, and
    // 64 cost it 48 B more (docs/footprint.md, issue 37's sixth round). Every packet is assembled by
    // the stack's framer (`receive`'s `inPlace: false`). 23, the size of the L2CAP signalling
    // buffer, so both share `FixedBytes<23>`'s code.
    var chunk = FixedBytes<23>()
    var nextStatus = statusInterval
    var lastPeak: UInt32 = 0
    var lastTick: UInt64 = 0
    var restartAt: UInt64?
    while true {
        chunk.removeAll()
        while chunk.count < 23, let byte = Board.hci.read() { chunk.append(byte) }
        output.now = Board.milliseconds(&clock)
        EventTime.now = output.now
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

// `receive` and `tick` out of line, each in a frame of its own: inlined into `runStack`, the
// temporaries of the one (an H4 packet assembled across chunks) and of the other (a GATT client's
// request on a timeout) were one frame that every path of the main loop started from.

@inline(never)
func receive<App: LEApplication, let links: Int, let attributes: Int, let values: Int, let framerOctets: Int>(
    _ bytes: Span<UInt8>, into stack: inout BluetoothStackOf<App, links, attributes, values, framerOctets>, output: inout UARTH4Output
) {
    // Not in place: of the packets a 23-octet read can hold whole (ATT requests with 16-bit UUIDs,
    // Command Complete and Status, Number of Completed Packets, Disconnection and LE Connection
    // Complete), the copy into the framer is at most 23 octets, and the code that spared it cost
    // more flash than it spared (beacon and wearable 176 B, on the micro:bit 288 and 272 B).
    stack.receive(bytes, now: output.now, output: &output, inPlace: false)
}

/// Bring-up, at boot and after a failure: one copy of `BluetoothStack.start` (inlined at both call
/// sites it was two).
@inline(never)
func start<App: LEApplication, let links: Int, let attributes: Int, let values: Int, let framerOctets: Int>(
    _ stack: inout BluetoothStackOf<App, links, attributes, values, framerOctets>, output: inout UARTH4Output
) {
    stack.start(now: output.now, output: &output)
}

@inline(never)
func tick<App: LEApplication, let links: Int, let attributes: Int, let values: Int, let framerOctets: Int>(
    _ stack: inout BluetoothStackOf<App, links, attributes, values, framerOctets>, output: inout UARTH4Output
) {
    stack.tick(now: output.now, output: &output)
}
