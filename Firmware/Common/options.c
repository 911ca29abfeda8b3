// Build options every image shares (Tools/firmware passes them as -D from the environment):
//   FIRMWARE_EPOCH=UNIX_SECONDS          the key schedule's epoch, and the board's Unix time at reset
//   FIRMWARE_PAYLOAD_PERIOD=SECONDS      the payload period, 10...360 (KeyEpoch.allowedSecondsPerPeriod)
// Without FIRMWARE_EPOCH the epoch is the project's standard one (2026-01-01T00:00:00Z) and the board
// starts ten days and an hour into it, as the QEMU wearable always did. A board has no clock: a
// product sets the time from the phone app or an RTC at provisioning.
#include <stdint.h>

#define STANDARD_EPOCH 1767225600LL
#ifndef FIRMWARE_PAYLOAD_PERIOD
#define FIRMWARE_PAYLOAD_PERIOD 360
#endif
#ifdef FIRMWARE_EPOCH
#define UNIX_TIME_AT_RESET ((int64_t)FIRMWARE_EPOCH)
#else
#define FIRMWARE_EPOCH STANDARD_EPOCH
#define UNIX_TIME_AT_RESET (STANDARD_EPOCH + 10 * 86400LL + 3600)
#endif

int64_t firmware_epoch(void) { return (int64_t)FIRMWARE_EPOCH; }
int64_t firmware_unix_time_at_reset(void) { return UNIX_TIME_AT_RESET; }
int32_t firmware_payload_period(void) { return FIRMWARE_PAYLOAD_PERIOD; }
