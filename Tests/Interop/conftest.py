"""Shared fixtures for interop tests: Bumble virtual controllers on ptys, and our `herald` binary."""
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

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


class Controllers:
    """N Bumble virtual controllers linked by one simulated radio, each on its own pty."""

    def __init__(self, count: int):
        self.dir = tempfile.mkdtemp(prefix="herald-ctl-")
        # At least two (one alone has nobody to talk to); extra ones just sit on the simulated radio.
        # Our own script: bumble.apps.controllers accepts exactly two transports.
        self.paths = [os.path.join(self.dir, f"hci{i}") for i in range(max(count, 2))]
        script = Path(__file__).parent / "peers" / "controllers.py"
        args = [sys.executable, str(script)] + [f"pty:{p}" for p in self.paths]
        self.log = open(os.path.join(self.dir, "controllers.log"), "w")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while not all(os.path.exists(p) for p in self.paths):
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"bumble controllers did not start: {open(self.log.name).read()}")
            time.sleep(0.05)

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


@pytest.fixture
def controllers(request):
    """`controllers(n)` starts n linked virtual controllers; they stop at the end of the test."""
    started = []

    def start(count: int = 2) -> Controllers:
        c = Controllers(count)
        started.append(c)
        return c

    yield start
    for c in started:
        c.close()
