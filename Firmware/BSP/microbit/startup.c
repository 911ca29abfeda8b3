// Board support, C half, for the BBC micro:bit (nRF51822, Cortex-M0) as QEMU's `microbit` machine
// models it: the vector table, reset (copy .data, zero .bss, paint the stack), TIMER0's millisecond
// tick, the UART's wake-up interrupt and the semihosting log. Board.swift beside it drives the UART.
//
// Time: the nRF51 has no SysTick (its Cortex-M0 is built without one) and QEMU 7.2 models no RTC, so
// TIMER0 (nRF51 RM v3.0 chapter 18) at 1 MHz clears itself every 1000 ticks (SHORTS COMPARE0_CLEAR)
// and interrupts. A product that sleeps would use RTC1 on the 32.768 kHz clock instead; on an
// nRF52840 SysTick works as on mps2-an386.
//
// Log: the chip has one UART and HCI has it, so log lines leave through semihosting (SYS_WRITEC,
// operation 0x03, ARM DUI 0471 "Semihosting"): QEMU prints them on its console. Without a debugger attached,
// real hardware would fault on the semihosting breakpoint: a product logs over RTT or a second UART
// (the nRF52840 has UARTE1), or not at all.
#include <stdint.h>

extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end;
extern uint32_t __stack_top;
void bsp_stack_paint_below(uint32_t *sp);

extern void firmware_main(void) __attribute__((noreturn));

#define REG(addr) (*(volatile uint32_t *)(addr))
// TIMER0 at 0x40008000 (peripheral ID 8, IRQ 8).
#define TIMER0_START       REG(0x40008000)
#define TIMER0_CLEAR       REG(0x4000800C)
#define TIMER0_COMPARE0    REG(0x40008140)
#define TIMER0_SHORTS      REG(0x40008200)
#define TIMER0_INTENSET    REG(0x40008304)
#define TIMER0_MODE        REG(0x40008504)
#define TIMER0_BITMODE     REG(0x40008508)
#define TIMER0_PRESCALER   REG(0x40008510)
#define TIMER0_CC0         REG(0x40008540)
// UART0 at 0x40002000 (IRQ 2): INTENCLR.
#define UART0_INTENCLR     REG(0x40002308)

static volatile uint32_t milliseconds;

__attribute__((noreturn)) void Reset_Handler(void) {
    // Armv6-M ARM B1.5.5: on reset only SP and PC are set.
    uint32_t *src = &__data_load, *dst = &__data_start;
    while (dst < &__data_end) *dst++ = *src++;
    for (dst = &__bss_start; dst < &__bss_end; dst++) *dst = 0;
    uint32_t *sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    bsp_stack_paint_below(sp);
    firmware_main();
}

// Timer mode, 32-bit, 16 MHz / 2^4 = 1 MHz, COMPARE0 at 1000 clears the counter and interrupts.
void bsp_timer_start(void) {
    TIMER0_MODE = 0;
    TIMER0_BITMODE = 3;
    TIMER0_PRESCALER = 4;
    TIMER0_CC0 = 1000;
    TIMER0_SHORTS = 1 << 0;
    TIMER0_INTENSET = 1 << 16;
    TIMER0_CLEAR = 1;
    TIMER0_START = 1;
}

void TIMER0_IRQHandler(void) {
    TIMER0_COMPARE0 = 0;
    milliseconds++;
}

// The receive interrupt only wakes the core from WFI; the main loop reads the bytes. Disarmed here
// (RXDRDY stays set until the main loop reads, and would raise the interrupt again at once);
// Board.sleep() arms it before waiting.
void UART0_IRQHandler(void) { UART0_INTENCLR = 1 << 2; }

uint32_t bsp_milliseconds(void) { return milliseconds; }

// Each byte by its own SYS_WRITEC (operation 0x03) from this frame: no line buffer in RAM. A
// 96-octet buffer collected each line for one SYS_WRITE0; with its length it was 100 of the
// micro:bit beacon's 116 B of static RAM (docs/footprint.md, issue 37's sixth round). A trap per
// byte is slower, which at a log line's rate does not matter.
void bsp_log_byte(uint8_t byte) {
    register uint32_t op __asm("r0") = 0x03;
    register const uint8_t *arg __asm("r1") = &byte;
    __asm volatile("bkpt #0xAB" : "+r"(op) : "r"(arg) : "memory");
}

__attribute__((noreturn)) void Fault_Handler(void) {
    for (;;) __asm volatile("bkpt #0");
}

void Default_Handler(void) {}

typedef void (*vector_t)(void);

// Armv6-M ARM B1.5.2: initial SP, the exception handlers, then the nRF51's peripheral interrupts
// (IRQ n = peripheral ID n: 0 POWER_CLOCK, 1 RADIO, 2 UART0, ..., 8 TIMER0). The table ends at the
// last interrupt the BSP enables (TIMER0, IRQ 8): an interrupt that is not enabled is never taken,
// so the other 23 entries would be 92 B of flash never read. Enabling a later interrupt means
// lengthening the table to it.
__attribute__((section(".vectors"), used)) const vector_t vector_table[16 + 9] = {
    (vector_t)&__stack_top,
    Reset_Handler,
    (vector_t)Fault_Handler, // NMI
    (vector_t)Fault_Handler, // HardFault
    0, 0, 0, 0, 0, 0, 0,
    Default_Handler, // SVCall
    0, 0,
    Default_Handler, // PendSV
    Default_Handler, // SysTick (absent on the nRF51)
    Default_Handler, Default_Handler, UART0_IRQHandler, Default_Handler, // IRQ 0-3
    Default_Handler, Default_Handler, Default_Handler, Default_Handler,  // IRQ 4-7
    TIMER0_IRQHandler,                                                   // IRQ 8
};
