/*
 * The Zephyr port's C glue: Zephyr's controller in raw HCI mode (CONFIG_BT_HCI_RAW, H:4 framing in
 * the buffers), and the Swift host (swift/Main.swift) driven from here:
 *   - H:4 in: every buffer the controller queues goes to host_receive();
 *   - H:4 out: chip_send() turns the host's packets into bt_buf + bt_send();
 *   - the wait: net_buf_get() on the controller's queue, with the host's next deadline as its
 *     timeout, then host_tick() when it passes;
 *   - the clock: k_uptime_get(), milliseconds since boot;
 *   - the log: chip_log_byte(), a line at a time through printk.
 * On nrf52_bsim every packet is also printed (`hci> ` host to controller, `hci< ` controller to
 * host, type byte first) so a test can rebuild a btsnoop capture from the log.
 */
#include <zephyr.h>
#include <sys/printk.h>
#include <net/buf.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/buf.h>
#include <bluetooth/hci_raw.h>
#include <errno.h>
#include <string.h>
#include "chip.h"
#include "memory.h"

static K_FIFO_DEFINE(rx_queue);

/* Swift -> C entry points. For i686-unknown-none-elf LLVM keeps the stack only 4-byte aligned,
 * while the gcc -m32 (Linux i386) code of the nrf52_bsim build assumes 16: realign on entry. */
#if defined(__i386__)
#define FROM_SWIFT __attribute__((force_align_arg_pointer))
#else
#define FROM_SWIFT
#endif

#if defined(CONFIG_BOARD_NRF52_BSIM)
/* One line per packet: "hci> " or "hci< ", then the packet in hex (at most an event's 258 octets
 * or an ACL buffer's, so 2 x 300 characters suffice; a longer packet is cut and marked). */
static void trace(const char *direction, const uint8_t *h4, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	static char line[2 * 300 + 8];
	size_t i, k = 0;

	for (i = 0; i < n && k + 4 < sizeof(line); i++) {
		line[k++] = digits[h4[i] >> 4];
		line[k++] = digits[h4[i] & 15];
	}
	if (i < n) {
		line[k++] = '+';
	}
	line[k] = 0;
	printk("%s %s\n", direction, line);
}
#else
#define trace(direction, h4, n)
#endif

/* Zephyr 2.5's link layer loses a link it has just made as central when the scanner is enabled again
 * at once: the host here answers in no time (on nrf52_bsim in no simulated time at all), and the new
 * link then never has its first connection events (LE Disconnection Complete 0x3E, Connection Failed to
 * be Established, every attempt to the single-chip beacon; docs/chip.md). A host over a UART is
 * milliseconds slower and never met it. So LE Set Scan Enable (on) is held until the link is two
 * connection intervals old (15 ms each, as the core asks) and sent from the main loop then, which
 * goes on draining the controller's queue meanwhile (a wait here would leave the controller no event
 * buffer for the command's own Command Complete: a deadlock, seen). The host sends no other command
 * before that Command Complete, so the order stays. */
#define SCAN_AFTER_CENTRAL_LINK_MS 30
static int64_t central_link_at = -SCAN_AFTER_CENTRAL_LINK_MS;
static uint8_t held[6];
static int64_t held_until = -1;

/* LE Connection Complete or LE Enhanced Connection Complete, success, role central
 * (Core 5.4 Vol 4 Part E 7.7.65.1 and 7.7.65.10: 04 3E len subevent status handle(2) role). */
static void note_link(const uint8_t *h4, size_t n, int64_t now)
{
	if (n >= 8 && h4[0] == 0x04 && h4[1] == 0x3E && (h4[3] == 0x01 || h4[3] == 0x0A) &&
	    h4[4] == 0x00 && h4[7] == 0x00) {
		central_link_at = now;
	}
}

static int send_packet(const uint8_t *h4, size_t n)
{
	struct net_buf *buf;
	int err;

	trace("hci>", h4, n);
	/* With the type byte only, bt_buf_get_tx picks the pool (command/ACL) and strips it. The host
	 * sends ACL data only against the controller's credits, so this waits at most for a buffer
	 * the controller is about to free. */
	buf = bt_buf_get_tx(BT_BUF_H4, K_FOREVER, h4, 1);
	if (!buf) {
		return -EINVAL; /* not 0x01 or 0x02 */
	}
	if (n - 1 > net_buf_tailroom(buf)) {
		net_buf_unref(buf);
		return -EMSGSIZE;
	}
	net_buf_add_mem(buf, h4 + 1, n - 1);
	err = bt_send(buf);
	if (err) {
		net_buf_unref(buf);
	}
	return err;
}

FROM_SWIFT int chip_send(const uint8_t *h4, size_t n)
{
	if (n < 1) {
		return -EINVAL;
	}
	/* LE Set Scan Enable (0x200C), LE_Scan_Enable 1, while a link made as central is young */
	if (n == sizeof(held) && h4[0] == 0x01 && h4[1] == 0x0C && h4[2] == 0x20 && h4[4] == 0x01 &&
	    k_uptime_get() < central_link_at + SCAN_AFTER_CENTRAL_LINK_MS) {
		memcpy(held, h4, sizeof(held));
		held_until = central_link_at + SCAN_AFTER_CENTRAL_LINK_MS;
		return 0;
	}
	return send_packet(h4, n);
}

FROM_SWIFT void chip_log_byte(uint8_t byte)
{
	static char line[512];
	static size_t count;

	if (byte != '\n' && count < sizeof(line) - 1) {
		line[count++] = (char)byte;
		return;
	}
	line[count] = 0;
	printk(byte == '\n' ? "%s\n" : "%s", line);
	count = 0;
	if (byte != '\n') {
		line[count++] = (char)byte;
	}
}

/* The Bluetooth stack's value lives here for the whole program (sized per role by CMake). */
static uint8_t host_memory[FIRMWARE_HOST_MEMORY] __aligned(8);

FROM_SWIFT void *chip_reserve(size_t bytes)
{
	return bytes <= sizeof(host_memory) ? host_memory : NULL;
}

FROM_SWIFT size_t chip_reserve_capacity(void)
{
	return sizeof(host_memory);
}

FROM_SWIFT void chip_halt(void)
{
	for (;;) {
		k_sleep(K_FOREVER);
	}
}

#if defined(CONFIG_BT_CTLR_ASSERT_HANDLER)
void bt_ctlr_assert_handle(char *file, uint32_t line)
{
	printk("controller assert %s:%u\n", file ? file : "?", line);
	k_oops();
}
#endif

void main(void)
{
	int64_t deadline, next_memory = 0;
	int err = bt_enable_raw(&rx_queue);

	printk("bt_enable_raw: %d\n", err);
	if (err) {
		return;
	}
	deadline = host_start(k_uptime_get());
	for (;;) {
		int64_t wake = deadline;
		k_timeout_t timeout = K_FOREVER;
		struct net_buf *buf;
		int64_t now;

		if (MEMORY_REPORT_INTERVAL && (wake < 0 || next_memory < wake)) {
			wake = next_memory;
		}
		if (held_until >= 0 && (wake < 0 || held_until < wake)) {
			wake = held_until;
		}
		if (wake >= 0) {
			int64_t left = wake - k_uptime_get();

			timeout = left > 0 ? K_MSEC(left) : K_NO_WAIT;
		}
		buf = net_buf_get(&rx_queue, timeout);
		now = k_uptime_get();
		if (buf) {
			/* BT_HCI_RAW_H4_ENABLE: buf->data starts with the H:4 type byte */
			trace("hci<", buf->data, buf->len);
			note_link(buf->data, buf->len, now);
			deadline = host_receive(buf->data, buf->len, now);
			net_buf_unref(buf);
		} else if (deadline >= 0 && now >= deadline) {
			deadline = host_tick(now);
		}
		if (held_until >= 0 && now >= held_until) {
			held_until = -1;
			send_packet(held, sizeof(held));
		}
		if (MEMORY_REPORT_INTERVAL && now >= next_memory) {
			next_memory = now + MEMORY_REPORT_INTERVAL;
			memory_report();
		}
	}
}
