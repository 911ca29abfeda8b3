// Shared by the footprint images that `Tools/embedded-check --report` links (Beacon.swift,
// Wearable.swift): the glue a real nRF52 firmware would have between the core and its UART, clock
// and flash. The board functions are C (board.c) and opaque to the optimiser, so nothing the core
// does with their results can be folded away.
import BluetoothHost

@_extern(c, "board_uart_read") func boardUARTRead(_ buffer: UnsafeMutablePointer<UInt8>, _ capacity: Int) -> Int
@_extern(c, "board_uart_write") func boardUARTWrite(_ buffer: UnsafePointer<UInt8>, _ count: Int)
@_extern(c, "board_millis") func boardMillis() -> UInt64
@_extern(c, "board_wait") func boardWait(_ until: UInt64)
/// The 2,048-octet Herald secret key and the 16-octet identity resolving key, kept in flash.
@_extern(c, "board_secret_key") func boardSecretKey() -> UnsafePointer<UInt8>
@_extern(c, "board_irk") func boardIRK() -> UnsafePointer<UInt8>
/// Six octets unique to the chip (nRF52: FICR DEVICEADDR), the seed of a static random address.
@_extern(c, "board_device_id") func boardDeviceID() -> UnsafePointer<UInt8>

/// The UART: one write per whole H4 packet.
struct BoardOutput: H4Output {
    mutating func send(h4 packet: Span<UInt8>) {
        packet.withUnsafeBufferPointer { boardUARTWrite($0.baseAddress!, $0.count) }
    }
}

nonisolated(unsafe) var boardOutput = BoardOutput()

/// The firmware's main loop: UART bytes in, timers at their deadline, forever.
func runForever<App: LEApplication, let links: Int, let attributes: Int, let values: Int>(
    _ stack: inout BluetoothStack<App, links, attributes, values>
) -> Never {
    var output = BoardOutput()
    var rx = InlineArray<64, UInt8>(repeating: 0)
    stack.start(now: boardMillis(), output: &output)
    while true {
        var mutable = rx.mutableSpan
        let n = mutable.withUnsafeMutableBufferPointer { boardUARTRead($0.baseAddress!, $0.count) }
        if n > 0 {
            stack.receive(rx.span.extracting(0..<n), now: boardMillis(), output: &output)
        }
        let now = boardMillis()
        if let deadline = stack.nextDeadline {
            if now >= deadline { stack.tick(now: now, output: &output) } else if n == 0 { boardWait(deadline) }
        }
    }
}
