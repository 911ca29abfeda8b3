// The few C library and EABI helpers Embedded Swift's generated code calls (it has no libc here):
// memory copy/fill and the ARM run-time ABI aliases (ARM IHI 0043 "Run-time ABI", 4.3.4).
// Byte loops are enough: the stack copies small values, and -Os keeps these tiny.
#include <stddef.h>
#include <stdint.h>

void *memcpy(void *restrict dst, const void *restrict src, size_t n) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    while (n--) *d++ = *s++;
    return dst;
}

void *memmove(void *dst, const void *src, size_t n) {
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d < s) {
        while (n--) *d++ = *s++;
    } else if (d > s) {
        while (n--) d[n] = s[n];
    }
    return dst;
}

void *memset(void *dst, int c, size_t n) {
    unsigned char *d = dst;
    while (n--) *d++ = (unsigned char)c;
    return dst;
}

int memcmp(const void *a, const void *b, size_t n) {
    const unsigned char *x = a, *y = b;
    for (; n; n--, x++, y++)
        if (*x != *y) return *x - *y;
    return 0;
}

size_t strlen(const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

// __aeabi_memset's argument order differs from memset's (dest, n, c).
void __aeabi_memcpy(void *d, const void *s, size_t n) { memcpy(d, s, n); }
void __aeabi_memcpy4(void *d, const void *s, size_t n) { memcpy(d, s, n); }
void __aeabi_memcpy8(void *d, const void *s, size_t n) { memcpy(d, s, n); }
void __aeabi_memmove(void *d, const void *s, size_t n) { memmove(d, s, n); }
void __aeabi_memmove4(void *d, const void *s, size_t n) { memmove(d, s, n); }
void __aeabi_memmove8(void *d, const void *s, size_t n) { memmove(d, s, n); }
void __aeabi_memset(void *d, size_t n, int c) { memset(d, c, n); }
void __aeabi_memset4(void *d, size_t n, int c) { memset(d, c, n); }
void __aeabi_memset8(void *d, size_t n, int c) { memset(d, c, n); }
void __aeabi_memclr(void *d, size_t n) { memset(d, 0, n); }
void __aeabi_memclr4(void *d, size_t n) { memset(d, 0, n); }
void __aeabi_memclr8(void *d, size_t n) { memset(d, 0, n); }

// 64-bit shifts by a variable amount (Run-time ABI 4.2). -Osize Swift code calls these rather than
// inlining the two-register sequence. Written with 32-bit halves so they cannot call themselves.
uint64_t __aeabi_llsr(uint64_t v, int n) {
    uint32_t lo = (uint32_t)v, hi = (uint32_t)(v >> 32);
    if (n >= 64) return 0;
    if (n >= 32) { lo = hi >> (n - 32); hi = 0; }
    else if (n > 0) { lo = (lo >> n) | (hi << (32 - n)); hi >>= n; }
    return ((uint64_t)hi << 32) | lo;
}

uint64_t __aeabi_llsl(uint64_t v, int n) {
    uint32_t lo = (uint32_t)v, hi = (uint32_t)(v >> 32);
    if (n >= 64) return 0;
    if (n >= 32) { hi = lo << (n - 32); lo = 0; }
    else if (n > 0) { hi = (hi << n) | (lo >> (32 - n)); lo <<= n; }
    return ((uint64_t)hi << 32) | lo;
}

int64_t __aeabi_lasr(int64_t v, int n) {
    int32_t hi = (int32_t)(v >> 32);
    uint32_t lo = (uint32_t)v;
    if (n >= 64) n = 63;
    if (n >= 32) { lo = (uint32_t)(hi >> (n - 32)); hi = hi >> 31; }
    else if (n > 0) { lo = (lo >> n) | ((uint32_t)hi << (32 - n)); hi >>= n; }
    return (int64_t)(((uint64_t)(uint32_t)hi << 32) | lo);
}

// 64-bit division (Run-time ABI 4.3.1): the Herald key schedule divides Unix times. Cortex-M4 only
// divides 32-bit values in hardware, so this is restoring shift-subtract division, one bit a step,
// with a 32-bit fast path.
uint64_t __udivmoddi4(uint64_t n, uint64_t d, uint64_t *rem) {
    if (d == 0) { *rem = n; return ~(uint64_t)0; }   // Swift traps before dividing by zero
    if ((n >> 32) == 0 && (d >> 32) == 0) {
        *rem = (uint32_t)n % (uint32_t)d;
        return (uint32_t)n / (uint32_t)d;
    }
    uint64_t q = 0, r = 0;
    for (int i = 0; i < 64; i++) {
        r = (r << 1) | (n >> 63);
        n <<= 1;
        q <<= 1;
        if (r >= d) { r -= d; q |= 1; }
    }
    *rem = r;
    return q;
}

int64_t __divmoddi4(int64_t a, int64_t b, int64_t *rem) {
    int negative_a = a < 0, negative_b = b < 0;
    uint64_t ua = negative_a ? 0 - (uint64_t)a : (uint64_t)a;
    uint64_t ub = negative_b ? 0 - (uint64_t)b : (uint64_t)b;
    uint64_t ur;
    uint64_t uq = __udivmoddi4(ua, ub, &ur);
    // C semantics: the quotient truncates toward zero, the remainder takes the dividend's sign.
    *rem = negative_a ? -(int64_t)ur : (int64_t)ur;
    return negative_a != negative_b ? -(int64_t)uq : (int64_t)uq;
}

// The EABI entry points return quotient in r0:r1 and remainder in r2:r3, which C cannot express:
// call the C routine with the remainder on the stack, then load it into r2:r3.
__attribute__((naked)) void __aeabi_uldivmod(void) {
    __asm volatile(
        "push {r6, lr}\n"
        "sub sp, sp, #16\n"
        "add r6, sp, #8\n"
        "str r6, [sp]\n"
        "bl __udivmoddi4\n"
        "ldr r2, [sp, #8]\n"
        "ldr r3, [sp, #12]\n"
        "add sp, sp, #16\n"
        "pop {r6, pc}\n");
}

__attribute__((naked)) void __aeabi_ldivmod(void) {
    __asm volatile(
        "push {r6, lr}\n"
        "sub sp, sp, #16\n"
        "add r6, sp, #8\n"
        "str r6, [sp]\n"
        "bl __divmoddi4\n"
        "ldr r2, [sp, #8]\n"
        "ldr r3, [sp, #12]\n"
        "add sp, sp, #16\n"
        "pop {r6, pc}\n");
}

// The Swift runtime seeds Hasher from this. There is no entropy source on this board model, and
// the images hash nothing an attacker chooses, so a fixed seed is fine; on an nRF52 fill it from
// the RNG peripheral instead.
void arc4random_buf(void *buf, size_t n) {
    unsigned char *p = buf;
    uint32_t x = 0x9E3779B9u;
    while (n--) { x ^= x << 13; x ^= x >> 17; x ^= x << 5; *p++ = (unsigned char)x; }
}

#if defined(__ARM_ARCH_6M__)
// Armv6-M (Cortex-M0: the micro:bit's nRF51) has no divide instruction and no exclusive loads and
// stores, so the compiler calls these where Armv7-M has instructions.

// 32-bit division (Run-time ABI 4.3.1), restoring shift-subtract, one bit a step.
static uint32_t udiv32(uint32_t n, uint32_t d, uint32_t *rem) {
    if (d == 0) { *rem = n; return ~0u; }   // Swift traps before dividing by zero
    uint32_t q = 0, r = 0;
    for (int i = 31; i >= 0; i--) {
        r = (r << 1) | ((n >> i) & 1);
        if (r >= d) { r -= d; q |= 1u << i; }
    }
    *rem = r;
    return q;
}

uint32_t __aeabi_uidiv(uint32_t n, uint32_t d) { uint32_t r; return udiv32(n, d, &r); }

// Quotient in r0, remainder in r1: a 64-bit return value is exactly that pair.
uint64_t __aeabi_uidivmod(uint32_t n, uint32_t d) {
    uint32_t r, q = udiv32(n, d, &r);
    return ((uint64_t)r << 32) | q;
}

int32_t __aeabi_idiv(int32_t a, int32_t b) {
    uint32_t r, q = udiv32(a < 0 ? 0u - (uint32_t)a : (uint32_t)a, b < 0 ? 0u - (uint32_t)b : (uint32_t)b, &r);
    return (a < 0) != (b < 0) ? -(int32_t)q : (int32_t)q;
}

uint64_t __aeabi_idivmod(int32_t a, int32_t b) {
    uint32_t r, q = udiv32(a < 0 ? 0u - (uint32_t)a : (uint32_t)a, b < 0 ? 0u - (uint32_t)b : (uint32_t)b, &r);
    int32_t quotient = (a < 0) != (b < 0) ? -(int32_t)q : (int32_t)q;
    int32_t remainder = a < 0 ? -(int32_t)r : (int32_t)r;
    return ((uint64_t)(uint32_t)remainder << 32) | (uint32_t)quotient;
}

// 64-bit multiplication (Run-time ABI 4.2): Armv6-M multiplies 32 x 32 -> 32 bits only, so the full
// product of the low words is built from 16-bit halves.
static uint64_t multiply32(uint32_t a, uint32_t b) {
    uint32_t al = a & 0xFFFF, ah = a >> 16, bl = b & 0xFFFF, bh = b >> 16;
    uint32_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint32_t middle = (ll >> 16) + (lh & 0xFFFF) + (hl & 0xFFFF);
    uint32_t lo = (ll & 0xFFFF) | (middle << 16);
    uint32_t hi = hh + (lh >> 16) + (hl >> 16) + (middle >> 16);
    return ((uint64_t)hi << 32) | lo;
}

uint64_t __aeabi_lmul(uint64_t a, uint64_t b) {
    uint32_t alo = (uint32_t)a, ahi = (uint32_t)(a >> 32), blo = (uint32_t)b, bhi = (uint32_t)(b >> 32);
    uint64_t low = multiply32(alo, blo);
    uint32_t hi = (uint32_t)(low >> 32) + alo * bhi + ahi * blo;
    return ((uint64_t)hi << 32) | (uint32_t)low;
}

// Word atomics (the GCC/LLVM libatomic calls): `_Volatile` register access and one-time global
// initialisation use them. One core and aligned words: a load or store is already atomic, and
// compare-exchange masks interrupts around its read-modify-write. Tools/firmware builds for the
// micro:bit with LLVM's atomics-32 (loads and stores inline), so there only the __sync
// compare-and-swap below is called; the libatomic calls stay for a build without it.
uint32_t bsp_atomic_load_4(const volatile void *p, int order) __asm__("__atomic_load_4");
uint32_t bsp_atomic_load_4(const volatile void *p, int order) {
    (void)order;
    __asm volatile("" ::: "memory");
    uint32_t v = *(const volatile uint32_t *)p;
    __asm volatile("" ::: "memory");
    return v;
}

void bsp_atomic_store_4(volatile void *p, uint32_t v, int order) __asm__("__atomic_store_4");
void bsp_atomic_store_4(volatile void *p, uint32_t v, int order) {
    (void)order;
    __asm volatile("" ::: "memory");
    *(volatile uint32_t *)p = v;
    __asm volatile("" ::: "memory");
}

_Bool bsp_atomic_compare_exchange_4(volatile void *p, void *expected, uint32_t desired, int success, int failure)
    __asm__("__atomic_compare_exchange_4");
_Bool bsp_atomic_compare_exchange_4(volatile void *p, void *expected, uint32_t desired, int success, int failure) {
    (void)success; (void)failure;
    uint32_t primask;
    __asm volatile("mrs %0, primask\n cpsid i" : "=r"(primask) :: "memory");
    uint32_t current = *(volatile uint32_t *)p;
    _Bool equal = current == *(uint32_t *)expected;
    if (equal) *(volatile uint32_t *)p = desired;
    else *(uint32_t *)expected = current;
    __asm volatile("msr primask, %0" :: "r"(primask) : "memory");
    return equal;
}

// What LLVM calls for a compare-exchange when 32-bit atomics are lock-free (atomics-32) on a core
// without exclusive access: the value found, with `desired` stored if it was `expected`.
uint32_t bsp_sync_val_compare_and_swap_4(volatile void *p, uint32_t expected, uint32_t desired)
    __asm__("__sync_val_compare_and_swap_4");
uint32_t bsp_sync_val_compare_and_swap_4(volatile void *p, uint32_t expected, uint32_t desired) {
    uint32_t primask;
    __asm volatile("mrs %0, primask\n cpsid i" : "=r"(primask) :: "memory");
    uint32_t current = *(volatile uint32_t *)p;
    if (current == expected) *(volatile uint32_t *)p = desired;
    __asm volatile("msr primask, %0" :: "r"(primask) : "memory");
    return current;
}
#endif
