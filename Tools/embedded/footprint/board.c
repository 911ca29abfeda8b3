// The C side of the footprint images: the few libc and ARM EABI helpers Embedded Swift calls, and
// stand-ins for the board's UART, clock and key storage. Sizes count towards the images, as they
// would in firmware (picolibc's versions are of the same order).
#include <stddef.h>
#include <stdint.h>

void *memset(void *d, int c, size_t n) { uint8_t *p = d; while (n--) *p++ = (uint8_t)c; return d; }
void *memcpy(void *d, const void *s, size_t n) { uint8_t *p = d; const uint8_t *q = s; while (n--) *p++ = *q++; return d; }
void *memmove(void *d, const void *s, size_t n) {
  uint8_t *p = d; const uint8_t *q = s;
  if (p < q) { while (n--) *p++ = *q++; } else { p += n; q += n; while (n--) *--p = *--q; }
  return d;
}
int memcmp(const void *a, const void *b, size_t n) {
  const uint8_t *p = a, *q = b;
  for (; n; n--, p++, q++) if (*p != *q) return *p - *q;
  return 0;
}
size_t strlen(const char *s) { size_t n = 0; while (s[n]) n++; return n; }
void __aeabi_memset(void *d, size_t n, int c) { memset(d, c, n); }
void __aeabi_memset4(void *d, size_t n, int c) { memset(d, c, n); }
void __aeabi_memset8(void *d, size_t n, int c) { memset(d, c, n); }
void __aeabi_memclr(void *d, size_t n) { memset(d, 0, n); }
void __aeabi_memclr4(void *d, size_t n) { memset(d, 0, n); }
void __aeabi_memclr8(void *d, size_t n) { memset(d, 0, n); }
void __aeabi_memcpy(void *d, const void *s, size_t n) { memcpy(d, s, n); }
void __aeabi_memcpy4(void *d, const void *s, size_t n) { memcpy(d, s, n); }
void __aeabi_memcpy8(void *d, const void *s, size_t n) { memcpy(d, s, n); }
void __aeabi_memmove(void *d, const void *s, size_t n) { memmove(d, s, n); }
void __aeabi_memmove4(void *d, const void *s, size_t n) { memmove(d, s, n); }
void __aeabi_memmove8(void *d, const void *s, size_t n) { memmove(d, s, n); }

// 64-bit division (KeyEpoch's day and period arithmetic, the peripheral's clock). The EABI entry returns the
// quotient in r0:r1 and the remainder in r2:r3, so it is a few lines of assembly around C.
uint64_t board_udivmod64(uint64_t n, uint64_t d, uint64_t *rem) {
  uint64_t q = 0, r = 0;
  if (d == 0) { *rem = n; return ~(uint64_t)0; }
  for (int i = 63; i >= 0; i--) {
    r = (r << 1) | ((n >> i) & 1);
    if (r >= d) { r -= d; q |= (uint64_t)1 << i; }
  }
  *rem = r;
  return q;
}
int64_t board_sdivmod64(int64_t n, int64_t d, int64_t *rem) {
  uint64_t un = n < 0 ? -(uint64_t)n : (uint64_t)n, ud = d < 0 ? -(uint64_t)d : (uint64_t)d, ur;
  uint64_t q = board_udivmod64(un, ud, &ur);
  *rem = n < 0 ? -(int64_t)ur : (int64_t)ur;
  return (n < 0) != (d < 0) ? -(int64_t)q : (int64_t)q;
}
__asm__(".syntax unified\n"
        ".thumb\n"
        ".section .text.__aeabi_uldivmod,\"ax\",%progbits\n"
        ".global __aeabi_uldivmod\n"
        ".type __aeabi_uldivmod,%function\n"
        ".thumb_func\n"
        "__aeabi_uldivmod:\n"
        "  push {r4, lr}\n"
        "  sub sp, sp, #16\n"
        "  add r4, sp, #8\n"
        "  str r4, [sp]\n"
        "  bl board_udivmod64\n"
        "  ldr r2, [sp, #8]\n"
        "  ldr r3, [sp, #12]\n"
        "  add sp, sp, #16\n"
        "  pop {r4, pc}\n"
        ".section .text.__aeabi_ldivmod,\"ax\",%progbits\n"
        ".global __aeabi_ldivmod\n"
        ".type __aeabi_ldivmod,%function\n"
        ".thumb_func\n"
        "__aeabi_ldivmod:\n"
        "  push {r4, lr}\n"
        "  sub sp, sp, #16\n"
        "  add r4, sp, #8\n"
        "  str r4, [sp]\n"
        "  bl board_sdivmod64\n"
        "  ldr r2, [sp, #8]\n"
        "  ldr r3, [sp, #12]\n"
        "  add sp, sp, #16\n"
        "  pop {r4, pc}\n");

// Peripherals: volatile registers stand in for UARTE and RTC.
static volatile uint8_t uart_data;
static volatile uint32_t uart_ready, rtc_counter;
ptrdiff_t board_uart_read(uint8_t *buf, ptrdiff_t cap) {
  ptrdiff_t n = 0;
  while (n < cap && uart_ready) buf[n++] = uart_data;
  return n;
}
void board_uart_write(const uint8_t *buf, ptrdiff_t n) { while (n--) uart_data = *buf++; }
uint64_t board_millis(void) { return rtc_counter; }
void board_wait(uint64_t until) { while (rtc_counter < until) {} }
static const uint8_t secret_key[2048] = {1};
static const uint8_t irk[16] = {2};
const uint8_t *board_secret_key(void) { return secret_key; }
const uint8_t *board_irk(void) { return irk; }
static const uint8_t device_id[6] = {3};
const uint8_t *board_device_id(void) { return device_id; }

void __assert_fail(void) { for (;;) {} }
void abort(void) { for (;;) {} }
int putchar(int c) { uart_data = (uint8_t)c; return c; }

extern int main(void);
// Reset handler: real firmware copies .data and clears .bss first; that adds a few dozen bytes.
void _start(void) { main(); for (;;) {} }
