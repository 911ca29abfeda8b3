// The firmware images' advertising data and scan response (Core 5.4 Vol 3 Part C 11), in flash:
// flags, the Herald service UUIDs (Herald advertisement: the specification's 128-bit one here, the
// registered 16-bit one in the scan response). Each block is its length, then its octets. Generated
// with the core's HeraldAdvertisement by Tests/HeraldTests/FirmwareBeaconConstantsTests.swift,
// which fails when this file differs; regenerate:
// HERALD_WRITE_GATT_TABLES=1 swift test --filter FirmwareBeaconConstants
#include <stdint.h>

static const uint8_t advertisement[27] = {
    21, // advertising data
    0x02, 0x01, 0x06, 0x11, 0x07, 0x9b, 0xfd, 0x5b, 0xd6, 0x72, 0x45, 0x1e,
    0x80, 0xd3, 0x42, 0x46, 0x47, 0xaf, 0x32, 0x81, 0x42,
    4, // scan response data
    0x03, 0x03, 0xf6, 0xfc,
};

const uint8_t *firmware_advertisement(void) { return advertisement; }
