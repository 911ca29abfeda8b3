"""The payload period grid as the tests set it: a wearable changes its payload and its resolvable
private address at every boundary of its grid (360 s periods from `--epoch`, by default from
2026-01-01T00:00:00Z), and to anyone listening a new address is a new device. A test that looks at one
address for a few seconds gives its wearable a grid whose next boundary is minutes away."""
import time
from datetime import datetime, timezone


def iso(t: float) -> str:
    """Unix time `t` as the ISO 8601 instant `--epoch` and `--time` take (whole seconds, UTC)."""
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def epoch_just_past() -> str:
    """A key schedule epoch 2 s ago: on the default 360 s period the next boundary (a new payload and
    a new resolvable private address) is 358 s away, beyond any single test's look at one address."""
    return iso(int(time.time()) - 2)
