/* The whole C ABI between the Zephyr glue (main.c) and the Swift port (swift/Main.swift, Board.swift).
 * Plain C, no Zephyr headers: it is also the Swift port's bridging header.
 * Times are Zephyr uptime in milliseconds (k_uptime_get); a deadline is a time, or -1 for none. */
#ifndef CHIP_H
#define CHIP_H
#include <stddef.h>
#include <stdint.h>

/* Swift -> C (main.c) */
/* One H:4 packet (type 0x01 command or 0x02 ACL data, then the HCI packet) to the controller;
 * 0, or a negative errno (too long, unknown type, bt_send's error). */
int chip_send(const uint8_t *h4, size_t n);
/* One byte of a log line; the line goes out with printk at its '\n'. */
void chip_log_byte(uint8_t byte);
/* Memory for the Bluetooth stack's value, alive for the whole program (a static array of
 * FIRMWARE_HOST_MEMORY octets); NULL when `bytes` is more than that. */
void *chip_reserve(size_t bytes);
/* Its size, for the memory line. */
size_t chip_reserve_capacity(void);
/* Stops here for good (after a fatal log line). */
void chip_halt(void);

/* C -> Swift (@_cdecl); each returns the stack's next deadline, or -1. */
int64_t host_start(int64_t now);                               /* once, after bt_enable_raw() */
int64_t host_receive(const uint8_t *h4, size_t n, int64_t now); /* each controller -> host packet */
int64_t host_tick(int64_t now);                                /* at (or after) the deadline */

#endif
