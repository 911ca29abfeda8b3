// Board support shared by every board, Swift half: what the images use beyond the board's own
// `Board` (its UARTs, `start`, `sleep` and `bsp_milliseconds`): the stack measurement, memory for
// state that lives as long as the program, and 64-bit milliseconds. Common/stack.c is its C half.
import BluetoothHost
@_silgen_name("bsp_stack_peak") func bsp_stack_peak() -> UInt32
@_silgen_name("bsp_stack_size") func bsp_stack_size() -> UInt32
@_silgen_name("bsp_stack_repaint") func bsp_stack_repaint()
@_silgen_name("bsp_reserve") func bsp_reserve(_ bytes: UInt32) -> UnsafeMutableRawPointer?
@_silgen_name("bsp_sleep_unless") func bsp_sleep_unless(_ ready: @convention(c) () -> UInt32)

extension Board {
    /// Milliseconds since reset, widened across the 32-bit counter's wrap (every 49.7 days).
    static func milliseconds(_ clock: inout MillisecondClock) -> UInt64 {
        clock.advance(to: bsp_milliseconds())
    }

    static var stackPeak: UInt32 { bsp_stack_peak() }
    static var stackSize: UInt32 { bsp_stack_size() }
    /// Starts a new stack high-water measurement from the current depth.
    static func restartStackMeasurement() { bsp_stack_repaint() }

    /// Uninitialised memory for one `T` that lives as long as the program (taken from the bottom of
    /// the stack region, see `bsp_reserve`); nil when it does not fit.
    static func reserve<T>(_ type: T.Type) -> UnsafeMutablePointer<T>? {
        guard MemoryLayout<T>.alignment <= 8,
              let raw = bsp_reserve(UInt32(truncatingIfNeeded: MemoryLayout<T>.size)) else { return nil }
        return raw.bindMemory(to: T.self, capacity: 1)
    }

    /// Logs what `reserve` took and what stack is left, before anything can run out of it: an image
    /// too big for the board's RAM stops during start-up, and this line says by how much it missed.
    static func logReservation<T>(_ type: T.Type) {
        Log.put("memory reserved stack_value="); Log.put(MemoryLayout<T>.size)
        Log.put(" stack_left="); Log.put(Board.stackSize); Log.end()
    }
}

/// Extends the 32-bit tick count to the 64-bit milliseconds the stack takes.
struct MillisecondClock {
    var high: UInt64 = 0
    var last: UInt32 = 0

    mutating func advance(to ticks: UInt32) -> UInt64 {
        if ticks < last { high &+= 1 &<< 32 }
        last = ticks
        return high | UInt64(widening: ticks)
    }
}
