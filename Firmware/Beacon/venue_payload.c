// The venue beacon's payload (Herald beacon payload specification): protocol 0x30, country 826,
// state 4, location code 0x0001E240, premises name "Herald Cafe" as extended data, in flash, as a
// deployment provisions it. Generated with the core's builder by
// Tests/HeraldTests/FirmwareBeaconConstantsTests.swift, which defines the venue and fails when
// this file differs; regenerate: HERALD_WRITE_GATT_TABLES=1 swift test --filter FirmwareBeaconConstants
#include <stdint.h>

// Codes big-endian, the specification's order (the default build).
static const uint8_t payload[22] = {
    0x30, 0x03, 0x3a, 0x00, 0x04, 0x00, 0x01, 0xe2, 0x40, 0x10, 0x0b, 0x48,
    0x65, 0x72, 0x61, 0x6c, 0x64, 0x20, 0x43, 0x61, 0x66, 0x65,
};

// Codes little-endian, the reference apps' order (FIRMWARE_SWIFTFLAGS=-DHERALD_APPS_BYTE_ORDER).
static const uint8_t payload_apps[22] = {
    0x30, 0x3a, 0x03, 0x04, 0x00, 0x40, 0xe2, 0x01, 0x00, 0x10, 0x0b, 0x48,
    0x65, 0x72, 0x61, 0x6c, 0x64, 0x20, 0x43, 0x61, 0x66, 0x65,
};

const uint8_t *firmware_venue_payload(void) { return payload; }
uint32_t firmware_venue_payload_size(void) { return sizeof payload; }
const uint8_t *firmware_venue_payload_apps(void) { return payload_apps; }
uint32_t firmware_venue_payload_apps_size(void) { return sizeof payload_apps; }
