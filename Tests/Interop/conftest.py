"""Shared fixtures for interop tests: Bumble virtual controllers on ptys, and our `herald` binary."""
import os
import subprocess
from pathlib import Path

import pytest

from radio import KINDS, open_radio, wanted_kinds

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session", autouse=True)
def private_keys_dir(tmp_path_factory):
    """Wearables started without --secret-key-file keep their key outside the log directory, by default
    under ~/.local/share: the tests give them a directory of their own instead."""
    path = tmp_path_factory.mktemp("herald-keys")
    os.environ["HERALD_KEYS_DIR"] = str(path)
    return path


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
        "markers", "controllers(*kinds, reason): run on these controller kinds (bumble, zephyr = Zephyr 3.0.99, "
                   "zephyr25 = Zephyr 2.5.0) instead of the default bumble and zephyr; the reason says why")
    config.addinivalue_line(
        "markers", "only_on(*kinds, reason): on a parameter (pytest.param(..., marks=...)) of a test that runs on "
                   "several controller kinds: this case runs on these kinds only; the reason says why")


def pytest_generate_tests(metafunc):
    """Every test that takes `controller_kind` (and so every test using `controllers`) runs once on
    Bumble's controller and once on Zephyr 3.0.99's, unless marked `@pytest.mark.controllers(kind, ...,
    reason=...)` (e.g. to run on Zephyr 2.5.0 as well: `zephyr25`). HERALD_CONTROLLERS narrows a run
    (`radio.wanted_kinds`)."""
    if "controller_kind" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("controllers")
    if marker is not None and not marker.kwargs.get("reason"):
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: @pytest.mark.controllers needs a reason")
    if marker is not None and not set(marker.args) <= set(KINDS):
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: unknown controller kind in {marker.args}; kinds: {KINDS}")
    kinds = wanted_kinds(marker.args if marker else None)
    metafunc.parametrize("controller_kind", kinds)


def pytest_collection_modifyitems(config, items):
    """Deselects the cases of a parametrized test that a parameter's `only_on` keeps off this kind:
    how a test spreads its cases over the controllers rather than running each on every one (e.g. one
    failure event per role on each Zephyr version, both on Bumble's)."""
    keep, drop = [], []
    for item in items:
        kind = item.callspec.params.get("controller_kind") if hasattr(item, "callspec") else None
        only = [m for m in item.iter_markers("only_on")]
        for m in only:
            if not m.kwargs.get("reason"):
                raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.only_on needs a reason")
        (drop if kind is not None and any(kind not in m.args for m in only) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture
def controllers(request, controller_kind):
    """`controllers(n)` starts n linked controllers of this test's kind (Bumble's virtual ones or
    Zephyr's simulated nRF52s, 3.0.99 or 2.5.0); they stop at the end of the test."""
    started = []

    def start(count: int = 2):
        c = open_radio(controller_kind, count)
        started.append(c)
        return c

    yield start
    for c in started:
        c.close()
