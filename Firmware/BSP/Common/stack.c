// Board support shared by every board: the stack's high-water measurement (painted at reset by the
// board's startup.c, read here), memory for the program's state taken from the bottom of the stack
// region, and the race-free sleep. Plain Armv6-M/Armv7-M: nothing here touches a peripheral.
#include <stdint.h>

extern uint32_t __stack_limit, __stack_top;

#define STACK_PAINT 0x5AFE57ACu

// The lowest word the stack may use: __stack_limit until `bsp_reserve` takes the bottom of the
// region for the application's state.
static uint32_t *stack_floor = &__stack_limit;

// Paints the stack region below the caller's frame (reset does this before any Swift code runs).
void bsp_stack_paint_below(uint32_t *sp) {
    for (uint32_t *p = stack_floor; p < sp - 16; p++) *p = STACK_PAINT;
}

uint32_t bsp_stack_peak(void) {
    uint32_t *p = stack_floor;
    while (p < &__stack_top && *p == STACK_PAINT) p++;
    return (uint32_t)((uintptr_t)&__stack_top - (uintptr_t)p);
}

// Paints the unused stack again, so the next peak measured is that of what runs from here on (the
// main loop) rather than of start-up.
void bsp_stack_repaint(void) {
    uint32_t *sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    bsp_stack_paint_below(sp);
}

uint32_t bsp_stack_size(void) { return (uint32_t)((uintptr_t)&__stack_top - (uintptr_t)stack_floor); }

// Takes `bytes` (8-byte aligned) from the bottom of the stack region, once, for state that lives as
// long as the program: the image builds its whole BluetoothStack there in place, so it is neither a
// local of the entry function (which the optimiser copies when it moves the value) nor a Swift
// global (whose initial value would have to be built first and copied in). The stack measures from
// above it. Null when the stack region is too small (or the stack already reaches into it).
void *bsp_reserve(uint32_t bytes) {
    uint32_t *sp, *start = stack_floor, *end = stack_floor + (bytes + 7) / 8 * 2;
    __asm volatile("mov %0, sp" : "=r"(sp));
    if (end + 256 > sp) return 0;
    stack_floor = end;
    return start;
}

// Waits for an interrupt unless `ready` (called with interrupts masked) says there is work: the
// classic race-free sleep. A pending interrupt still ends WFI while PRIMASK is set (Armv7-M ARM
// B1.5.19, Armv6-M ARM B1.5.16), and runs as soon as interrupts are unmasked again.
void bsp_sleep_unless(uint32_t (*ready)(void)) {
    __asm volatile("cpsid i" ::: "memory");
    if (!ready()) __asm volatile("dsb\n wfi" ::: "memory");
    __asm volatile("cpsie i\n isb" ::: "memory");
}
