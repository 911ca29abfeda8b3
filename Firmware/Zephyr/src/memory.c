/*
 * Stack high-water marks of every Zephyr thread (main, where the Swift host runs; the controller's
 * "BT RX" and "BT RX pri"; the system workqueue; idle), printed by main.c every few seconds.
 *
 * On a real nRF52 a thread runs on the stack Zephyr declared for it, which CONFIG_INIT_STACKS paints,
 * and k_thread_stack_space_get() reads how much of the paint is left. On nrf52_bsim (arch/posix)
 * each Zephyr thread runs on a pthread of its own, on a native stack, and the declared stack holds
 * only the thread's start-up record: so here pthread_create is wrapped (-Wl,--wrap, CMakeLists.txt)
 * to give each thread a painted native stack of its own, and the paint left on it is measured the
 * same way, less what glibc takes of any stack it is given (its thread descriptor and TLS at the top,
 * measured on a thread that does nothing). What is left includes the posix arch's own frames (each
 * thread waits on a condition variable while it is not the one running). These are 32-bit x86 frames
 * (gcc -m32, and i686 Swift), not Thumb-2 ones: a measure of the code's depth, close to but not the
 * same as an nRF52's.
 */
#include <zephyr.h>
#include <sys/printk.h>
#include <string.h>
#include "memory.h"

#if MEMORY_REPORT_INTERVAL

#define PAINT 0xAA

#if defined(CONFIG_ARCH_POSIX)
#include <pthread.h>
#include <stdlib.h>
#include "posix_core.h" /* posix_thread_status_t (arch/posix/include) */

/* Each thread's native stack: generous (the board's own default is 8 MB); what is used is measured. */
#define NATIVE_STACK_SIZE (256 * 1024)
#define NATIVE_STACKS 16

static struct {
	int slot; /* posix_core.c's thread slot: pthread_create's argument, the status's thread_idx */
	uint8_t *stack;
} natives[NATIVE_STACKS];
static int native_count;

int __real_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			  void *(*start)(void *), void *arg);

int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			  void *(*start)(void *), void *arg)
{
	if (attr == NULL && native_count < NATIVE_STACKS) {
		void *stack = NULL;

		if (posix_memalign(&stack, 4096, NATIVE_STACK_SIZE) == 0) {
			pthread_attr_t a;
			int r;

			memset(stack, PAINT, NATIVE_STACK_SIZE);
			pthread_attr_init(&a);
			pthread_attr_setstack(&a, stack, NATIVE_STACK_SIZE);
			natives[native_count].slot = (int)(intptr_t)arg;
			natives[native_count].stack = stack;
			native_count++;
			r = __real_pthread_create(thread, &a, start, arg);
			pthread_attr_destroy(&a);
			return r;
		}
	}
	return __real_pthread_create(thread, attr, start, arg);
}

/* Octets of a painted native stack ever used (the stack grows down from its top). */
static size_t painted_used(const uint8_t *stack)
{
	size_t untouched = 0;

	while (untouched < NATIVE_STACK_SIZE && stack[untouched] == PAINT) {
		untouched++;
	}
	return NATIVE_STACK_SIZE - untouched;
}

static void *do_nothing(void *arg)
{
	return arg;
}

/* What glibc itself takes from the top of a stack it is given (its thread descriptor and static TLS)
 * and its thread start-up frames: measured once, on a thread that does nothing, and not counted. */
static size_t pthread_overhead(void)
{
	static size_t overhead = (size_t)-1;

	if (overhead == (size_t)-1) {
		void *stack = NULL;
		pthread_attr_t a;
		pthread_t t;

		overhead = 0;
		if (posix_memalign(&stack, 4096, NATIVE_STACK_SIZE) == 0) {
			memset(stack, PAINT, NATIVE_STACK_SIZE);
			pthread_attr_init(&a);
			pthread_attr_setstack(&a, stack, NATIVE_STACK_SIZE);
			if (__real_pthread_create(&t, &a, do_nothing, NULL) == 0 && pthread_join(t, NULL) == 0) {
				overhead = painted_used(stack);
			}
			pthread_attr_destroy(&a);
			free(stack);
		}
	}
	return overhead;
}

/* Octets of the thread's native stack used beyond glibc's own. */
static size_t stack_used(const struct k_thread *thread)
{
	const posix_thread_status_t *status = thread->callee_saved.thread_status;

	for (int i = 0; status && i < native_count; i++) {
		if (natives[i].slot == status->thread_idx) {
			size_t used = painted_used(natives[i].stack), overhead = pthread_overhead();

			return used > overhead ? used - overhead : 0;
		}
	}
	return 0;
}
#else
static size_t stack_used(const struct k_thread *thread)
{
	size_t unused = 0;

	if (k_thread_stack_space_get(thread, &unused) != 0) {
		return 0;
	}
	return thread->stack_info.size - unused;
}
#endif

static void report_thread(const struct k_thread *thread, void *user_data)
{
	char name[24];
	const char *given = k_thread_name_get((k_tid_t)thread);
	size_t i;

	ARG_UNUSED(user_data);
	/* "BT RX pri" -> "BT_RX_pri": the line is key=value words */
	for (i = 0; given && given[i] && i < sizeof(name) - 1; i++) {
		name[i] = given[i] == ' ' ? '_' : given[i];
	}
	name[i] = 0;
	printk("memory thread=%s stack_size=%u stack_used=%u\n", i ? name : "?",
	       (unsigned int)thread->stack_info.size, (unsigned int)stack_used(thread));
}

void memory_report(void)
{
	k_thread_foreach(report_thread, NULL);
}

#else
void memory_report(void)
{
}
#endif
