// Board support, Swift half: the CMSDK APB UART driver, SysTick and the NVIC for QEMU's mps2-an386.
import BluetoothHost
// With startup.c beside it this is the only code that touches registers; the images above it see
// `Board.hci` / `Board.log` (byte ports), `Board.milliseconds` and `Board.sleep`.
//
// Registers are reached through `_Volatile`: plain pointer loads and stores to MMIO are legal for
// the optimiser to merge or drop, volatile ones are not.
import _Volatile

/// One CMSDK APB UART (ARM DDI 0479 "Cortex-M System Design Kit TRM", 4.3): data, state, control,
/// interrupt status/clear, baud divisor. Its receive side holds one byte, so the main loop drains it
/// often; QEMU back-pressures the character backend while it is full, so nothing is lost there.
struct CMSDKUART {
    let base: UInt

    private var data: VolatileMappedRegister<UInt32> { .init(unsafeBitPattern: base) }
    private var state: VolatileMappedRegister<UInt32> { .init(unsafeBitPattern: base + 0x004) }
    private var control: VolatileMappedRegister<UInt32> { .init(unsafeBitPattern: base + 0x008) }
    private var baudDivisor: VolatileMappedRegister<UInt32> { .init(unsafeBitPattern: base + 0x010) }

    // STATE bits: 0 TX buffer full, 1 RX buffer full. CTRL bits: 0 TX enable, 1 RX enable,
    // 3 RX interrupt enable.
    static let txFull: UInt32 = 1 << 0
    static let rxFull: UInt32 = 1 << 1

    /// `divisor` = peripheral clock / baud (≥ 16); QEMU ignores the rate but checks the divisor.
    func enable(divisor: UInt32, receiveInterrupt: Bool) {
        baudDivisor.store(divisor)
        control.store(0x3 | (receiveInterrupt ? 1 << 3 : 0))
    }

    var hasByte: Bool { state.load() & Self.rxFull != 0 }

    func read() -> UInt8? {
        guard hasByte else { return nil }
        return UInt8(truncatingIfNeeded: data.load())
    }

    func write(_ byte: UInt8) {
        while state.load() & Self.txFull != 0 {}
        data.store(UInt32(byte))
    }
}

@_silgen_name("bsp_milliseconds") func bsp_milliseconds() -> UInt32

enum Board {
    /// AN386 runs its peripherals from a 25 MHz clock.
    static let clockHz: UInt32 = 25_000_000
    /// UART0: the HCI link to the controller (an nRF52 running hci_uart, or Bumble under QEMU).
    static let hci = CMSDKUART(base: 0x4000_4000)
    /// UART1: human-readable log lines.
    static let log = CMSDKUART(base: 0x4000_5000)

    /// Enables the UARTs (1 Mbaud HCI, 115200 log), a 1 ms SysTick and the HCI receive interrupt.
    static func start() {
        hci.enable(divisor: clockHz / 1_000_000 < 16 ? 16 : clockHz / 1_000_000, receiveInterrupt: true)
        log.enable(divisor: clockHz / 115_200, receiveInterrupt: false)
        // SysTick (Armv7-M ARM B3.3): reload for 1 ms, processor clock, interrupt, enable.
        VolatileMappedRegister<UInt32>(unsafeBitPattern: 0xE000_E014).store(clockHz / 1000 - 1)
        VolatileMappedRegister<UInt32>(unsafeBitPattern: 0xE000_E018).store(0)
        VolatileMappedRegister<UInt32>(unsafeBitPattern: 0xE000_E010).store(0x7)
        // NVIC ISER0 (B3.4.4): IRQ0, UART0 RX, wakes the core from WFI when a byte arrives.
        VolatileMappedRegister<UInt32>(unsafeBitPattern: 0xE000_E100).store(1 << 0)
    }

    /// Sleeps until the next interrupt (SysTick at most 1 ms away) unless a byte is already waiting.
    static func sleep() {
        bsp_sleep_unless { Board.hci.hasByte ? 1 : 0 }
    }
}
