"""Shared fixtures for interop tests: Bumble virtual controllers on ptys, and our `herald` binary."""
import os
import subprocess
from pathlib import Path

import pytest

from radio import KINDS, open_radio

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def herald_bin() -> str:
    path = os.environ.get("HERALD_BIN")
    if not path:
        out = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True)
        path = str(Path(out.stdout.strip()) / "herald")
    if not Path(path).exists():
        pytest.fail(f"herald binary not found at {path}; run `swift build --product herald`")
    return path


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "controllers(*kinds, reason): run only on these controller kinds (bumble, zephyr); "
                   "the reason says why the other cannot run it")


def wanted_kinds():
    """HERALD_CONTROLLERS=bumble (or zephyr) narrows a run to one kind; CI runs both."""
    chosen = os.environ.get("HERALD_CONTROLLERS")
    return tuple(k for k in KINDS if not chosen or k in chosen.split(","))


def pytest_generate_tests(metafunc):
    """Every test that takes `controller_kind` (and so every test using `controllers`) runs once per
    kind of controller, unless marked `@pytest.mark.controllers(kind, reason=...)`."""
    if "controller_kind" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("controllers")
    if marker is not None and not marker.kwargs.get("reason"):
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: @pytest.mark.controllers needs a reason")
    kinds = [k for k in (marker.args if marker else KINDS) if k in wanted_kinds()]
    metafunc.parametrize("controller_kind", kinds)


@pytest.fixture
def controllers(request, controller_kind):
    """`controllers(n)` starts n linked controllers of this test's kind (Bumble's virtual ones or
    Zephyr's simulated nRF52s); they stop at the end of the test."""
    started = []

    def start(count: int = 2):
        c = open_radio(controller_kind, count)
        started.append(c)
        return c

    yield start
    for c in started:
        c.close()
