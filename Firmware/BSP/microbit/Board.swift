// Board support, Swift half, for the BBC micro:bit (nRF51822: Cortex-M0, 16 MHz, 256 KB flash,
// 16 KB RAM), as QEMU's `microbit` machine models it: the nRF5 UART carries HCI, TIMER0 counts
// milliseconds, and the log goes out through semihosting (startup.c), since the chip has one UART.
// With startup.c beside it this is the only code that touches registers.
import BluetoothHost
import _Volatile

/// The nRF5 UART (nRF51 Series Reference Manual v3.0, chapter 29; the nRF52840's UART0 keeps the same
/// registers at the same offsets, Product Specification 6.33): tasks start and stop the receiver and
/// transmitter, events say a byte arrived (RXDRDY) or left (TXDRDY), RXD/TXD hold one byte, PSEL
/// routes the signals to pins. Events are cleared by writing 0 (they stay set until then).
struct NRF5UART {
    let base: UInt

    private func register(_ offset: UInt) -> VolatileMappedRegister<UInt32> { .init(unsafeBitPattern: base + offset) }
    private var startRX: VolatileMappedRegister<UInt32> { register(0x000) }
    private var startTX: VolatileMappedRegister<UInt32> { register(0x008) }
    private var rxReady: VolatileMappedRegister<UInt32> { register(0x108) }
    private var txReady: VolatileMappedRegister<UInt32> { register(0x11C) }
    private var interruptSet: VolatileMappedRegister<UInt32> { register(0x304) }
    private var enableRegister: VolatileMappedRegister<UInt32> { register(0x500) }
    private var pinRTS: VolatileMappedRegister<UInt32> { register(0x508) }
    private var pinTXD: VolatileMappedRegister<UInt32> { register(0x50C) }
    private var pinCTS: VolatileMappedRegister<UInt32> { register(0x510) }
    private var pinRXD: VolatileMappedRegister<UInt32> { register(0x514) }
    private var rxd: VolatileMappedRegister<UInt32> { register(0x518) }
    private var txd: VolatileMappedRegister<UInt32> { register(0x51C) }
    private var baudRate: VolatileMappedRegister<UInt32> { register(0x524) }
    private var config: VolatileMappedRegister<UInt32> { register(0x56C) }

    /// INTEN bit of the RXDRDY event.
    static let rxReadyInterrupt: UInt32 = 1 << 2
    /// BAUDRATE values (RM 29.10.14): 1 Mbaud, what Zephyr's hci_uart runs at.
    static let baud1M: UInt32 = 0x1000_0000
    /// A PSEL value that leaves the signal unconnected.
    static let disconnected: UInt32 = 0xFFFF_FFFF

    /// Routes the signals to pins (RTS/CTS `disconnected` for no flow control), sets the rate, enables
    /// the UART (ENABLE = 4) and starts both directions.
    func enable(tx: UInt32, rx: UInt32, rts: UInt32 = disconnected, cts: UInt32 = disconnected, baud: UInt32 = baud1M) {
        pinTXD.store(tx)
        pinRXD.store(rx)
        pinRTS.store(rts)
        pinCTS.store(cts)
        // CONFIG.HWFC (bit 0): hardware flow control when both RTS and CTS have pins.
        config.store(rts != Self.disconnected && cts != Self.disconnected ? 1 : 0)
        baudRate.store(baud)
        enableRegister.store(4)
        rxReady.store(0)
        txReady.store(0)
        startRX.store(1)
        startTX.store(1)
    }

    var hasByte: Bool { rxReady.load() != 0 }

    /// The next received byte: the event is cleared before RXD is read, because reading RXD moves
    /// the next byte of the receive FIFO (six deep) into RXD and raises RXDRDY again (RM 29.5).
    func read() -> UInt8? {
        guard hasByte else { return nil }
        rxReady.store(0)
        return UInt8(truncatingIfNeeded: rxd.load())
    }

    /// Sends one byte and waits until it has left (TXDRDY).
    func write(_ byte: UInt8) {
        txReady.store(0)
        txd.store(UInt32(byte))
        while txReady.load() == 0 {}
    }

    /// Lets RXDRDY raise the UART's interrupt (the handler in startup.c turns it off again).
    func enableReceiveInterrupt() { interruptSet.store(Self.rxReadyInterrupt) }
}

/// Log lines through semihosting (startup.c): a line is written when it ends.
struct SemihostingLog {
    func write(_ byte: UInt8) { bsp_log_byte(byte) }
}

@_silgen_name("bsp_milliseconds") func bsp_milliseconds() -> UInt32
@_silgen_name("bsp_log_byte") func bsp_log_byte(_ byte: UInt8)

enum Board {
    /// UART0 at 0x40002000 (nRF51: peripheral ID 2, so IRQ 2): the HCI link to the controller.
    static let hci = NRF5UART(base: 0x4000_2000)
    static let log = SemihostingLog()
    /// The micro:bit's edge connector P0.02 (TX) and P0.03 (RX), as a product would wire a controller
    /// board; QEMU ignores pins. RTS/CTS are left unconnected (the emulated UART has no flow control).
    static let hciTXPin: UInt32 = 2
    static let hciRXPin: UInt32 = 3

    /// Enables the HCI UART at 1 Mbaud, TIMER0's millisecond tick (startup.c) and the UART interrupt.
    static func start() {
        hci.enable(tx: hciTXPin, rx: hciRXPin)
        bsp_timer_start()
        // NVIC ISER (Armv6-M ARM B3.4): IRQ 2 (UART0) and IRQ 8 (TIMER0).
        VolatileMappedRegister<UInt32>(unsafeBitPattern: 0xE000_E100).store(1 << 2 | 1 << 8)
    }

    /// Sleeps until the next interrupt (TIMER0 at most 1 ms away) unless a byte is already waiting.
    /// The receive interrupt is armed only here, with interrupts masked: its handler disarms it, so a
    /// byte the main loop has not read yet does not keep raising it.
    static func sleep() {
        bsp_sleep_unless {
            if Board.hci.hasByte { return 1 }
            Board.hci.enableReceiveInterrupt()
            return 0
        }
    }
}

@_silgen_name("bsp_timer_start") func bsp_timer_start()
