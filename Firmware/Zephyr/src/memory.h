/* Stack high-water marks of every Zephyr thread, as log lines
 * `memory thread=NAME stack_size=N stack_used=N` (memory.c). */
#ifndef MEMORY_H
#define MEMORY_H

#if defined(CONFIG_THREAD_MONITOR) && defined(CONFIG_THREAD_STACK_INFO)
/* How often main.c prints them, in milliseconds. */
#define MEMORY_REPORT_INTERVAL 5000
#else
#define MEMORY_REPORT_INTERVAL 0
#endif

void memory_report(void);

#endif
