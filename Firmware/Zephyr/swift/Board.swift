// The Zephyr port's board: what the role files and Common/ use of a board, over the C glue
// (src/chip.h): `Board.log`, the byte port of log lines (printk a line at a time), and `halt`.
// Time, H:4 and the wait are main.c's and Main.swift's.

enum Board {
    struct LogPort {
        func write(_ byte: UInt8) { chip_log_byte(byte) }
    }
    static let log = LogPort()
}

func halt(_ reason: StaticString) -> Never {
    Log.put("fatal: "); Log.line(reason)
    chip_halt()
    while true {}
}
