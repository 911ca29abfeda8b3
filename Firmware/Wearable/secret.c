// The wearable's 2,048-octet Herald secret key (Herald Simple payload specification: every day key
// and contact identifier derives from it), in flash (.rodata) where both payload producers read it
// in place (`StaticSecretKey`): no RAM for it at all. A fixed test key, octet i = 7i + 3 (mod 256);
// a product generates its own once from a TRNG and keeps it in flash.
#include <stdint.h>

#define K1(i) (uint8_t)((i) * 7 + 3)
#define K4(i) K1(i), K1((i) + 1), K1((i) + 2), K1((i) + 3)
#define K16(i) K4(i), K4((i) + 4), K4((i) + 8), K4((i) + 12)
#define K64(i) K16(i), K16((i) + 16), K16((i) + 32), K16((i) + 48)
#define K256(i) K64(i), K64((i) + 64), K64((i) + 128), K64((i) + 192)
#define K1024(i) K256(i), K256((i) + 256), K256((i) + 512), K256((i) + 768)

static const uint8_t secret_key[2048] = { K1024(0), K1024(1024) };

const uint8_t *wearable_secret_key(void) { return secret_key; }

// Its identity resolving key (HCI byte order), from which the resolvable private addresses are made:
// a fixed test key too ("WEARABLE-IRK-001"). Tools/firmware writes both beside a Zephyr build as
// `herald keys` reads them (secret.key, secret.key.irk).
static const uint8_t irk[16] = { 'W', 'E', 'A', 'R', 'A', 'B', 'L', 'E', '-', 'I', 'R', 'K', '-', '0', '0', '1' };

const uint8_t *wearable_irk(void) { return irk; }
