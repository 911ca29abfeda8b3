// Board support, C half: the vector table, reset (copy .data, zero .bss, paint the stack), and the
// interrupt handlers that must share state with the main loop (the millisecond tick). Everything
// register-level that Swift drives lives in Board.swift beside it; this folder is what a port to
// another board replaces (see Firmware/README.md). Common/ holds what every board shares.
//
// Target: QEMU mps2-an386 (ARM AN386: Cortex-M4 at 25 MHz, CMSDK APB UARTs).
#include <stdint.h>

extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end;
extern uint32_t __stack_top;
void bsp_stack_paint_below(uint32_t *sp);

// Swift entry point (Common/FirmwareMain.swift calls the image's application).
extern void firmware_main(void) __attribute__((noreturn));

static volatile uint32_t milliseconds;   // SysTick count since reset

__attribute__((noreturn)) void Reset_Handler(void) {
    // Armv7-M ARM B1.5.6: on reset only SP and PC are set; C and Swift statics need .data copied
    // from its load address (flash) and .bss cleared before any code uses them.
    uint32_t *src = &__data_load, *dst = &__data_start;
    while (dst < &__data_end) *dst++ = *src++;
    for (dst = &__bss_start; dst < &__bss_end; dst++) *dst = 0;
    // Paint the stack below our own frame so the peak use can be measured later (Common/stack.c).
    uint32_t *sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    bsp_stack_paint_below(sp);
    // Enable the FPU (CPACR CP10/CP11 full access, Armv7-M ARM B3.2.20): Swift's -Osize code for
    // armv7em may use VFP registers for moves.
    *(volatile uint32_t *)0xE000ED88 |= (0xFu << 20);
    __asm volatile("dsb\n isb");
    firmware_main();
}

void SysTick_Handler(void) { milliseconds++; }

// UART interrupts only wake the core from WFI; the main loop drains the receive register itself.
// Clearing INTCLEAR (CMSDK APB UART TRM, offset 0x00C) stops the interrupt from re-firing.
void UART0RX_Handler(void) { *(volatile uint32_t *)0x4000400C = 0x2; }

__attribute__((noreturn)) void Fault_Handler(void) {
    // Park; a debugger (or QEMU's monitor) can read the fault status registers.
    for (;;) __asm volatile("bkpt #0");
}

void Default_Handler(void) {}

uint32_t bsp_milliseconds(void) { return milliseconds; }

typedef void (*vector_t)(void);

// Armv7-M ARM B1.5.3: initial SP, then the exception handlers, then external interrupts. AN386's
// interrupt map: IRQ0 UART0 RX, IRQ1 UART0 TX, IRQ2 UART1 RX, IRQ3 UART1 TX. The table ends at the
// last interrupt the BSP enables (IRQ0, Board.start's NVIC ISER0): an interrupt that is not enabled
// is never taken (B3.4), so entries past it would be 60 B of flash never read. Enabling another
// interrupt means lengthening the table to it.
__attribute__((section(".vectors"), used)) const vector_t vector_table[16 + 1] = {
    (vector_t)&__stack_top,
    Reset_Handler,
    (vector_t)Fault_Handler, // NMI
    (vector_t)Fault_Handler, // HardFault
    (vector_t)Fault_Handler, // MemManage
    (vector_t)Fault_Handler, // BusFault
    (vector_t)Fault_Handler, // UsageFault
    0, 0, 0, 0,
    Default_Handler, // SVCall
    Default_Handler, // DebugMonitor
    0,
    Default_Handler, // PendSV
    SysTick_Handler,
    UART0RX_Handler, // IRQ0
};
