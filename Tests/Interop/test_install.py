"""`Tools/install` as a user runs it: a release `herald` on PATH with completions, man pages and the
Wireshark dissector, and `--uninstall` takes exactly that away again.

One install per module into a temporary prefix, with HOME a temporary directory too (Wireshark's
personal plugin folder is under it); the release build it makes is most of the module's time (minutes
the first time, seconds when .build/release is current).
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(3600)


def files_under(path):
    return sorted(str(p.relative_to(path)) for p in Path(path).rglob("*") if not p.is_dir())


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    prefix = tmp_path_factory.mktemp("prefix")
    # A PATH without the prefix: the installer must say so.
    env = {**os.environ, "HOME": str(home), "PATH": os.environ["PATH"]}
    env.pop("HERALD_BIN", None)
    r = subprocess.run([str(ROOT / "Tools" / "install"), "--prefix", str(prefix)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=3000)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return dict(home=home, prefix=prefix, env=env, out=r.stdout, err=r.stderr)


def test_installs_a_release_herald_that_runs(installed, herald_bin):
    herald = installed["prefix"] / "bin" / "herald"
    r = subprocess.run([str(herald), "--version"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout.strip().startswith("herald "), r
    # The version the tests' own build reports.
    assert r.stdout == subprocess.run([herald_bin, "--version"], capture_output=True, text=True).stdout
    assert f"Note: {installed['prefix']}/bin is not on your PATH" in installed["out"], installed["out"]


def test_bash_completion_loads(installed):
    script = installed["prefix"] / "share" / "bash-completion" / "completions" / "herald"
    r = subprocess.run(["bash", "-c", f"set -e; source '{script}'; complete -p herald"], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0 and r.stderr == "", r
    assert "herald" in r.stdout
    assert (installed["prefix"] / "share" / "zsh" / "site-functions" / "_herald").read_text().startswith("#compdef herald")
    assert "complete -c 'herald'" in (installed["prefix"] / "share" / "fish" / "vendor_completions.d" / "herald.fish").read_text()


@pytest.mark.skipif(shutil.which("man") is None, reason="man not installed (Tools/test installs man-db)")
def test_man_pages_render(installed):
    pages = installed["prefix"] / "share" / "man" / "man1"
    assert (pages / "herald.1").exists(), files_under(installed["prefix"])
    for name, words in (("herald.1", ["wearable", "scan"]), ("herald.wearable.1", ["--log-dir"])):
        r = subprocess.run(["man", "-l", "-P", "cat", str(pages / name)], capture_output=True, text=True, timeout=60,
                           env={**os.environ, "MANWIDTH": "100"})
        assert r.returncode == 0, r.stderr
        assert "HERALD" in r.stdout.upper() and all(w in r.stdout for w in words), r.stdout[:2000]


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark not installed")
def test_wireshark_finds_the_dissector_in_its_personal_folder(installed):
    plugin = installed["home"] / ".local" / "lib" / "wireshark" / "plugins" / "herald.lua"
    assert plugin.exists(), files_under(installed["home"])
    r = subprocess.run(["tshark", "-G", "protocols"], capture_output=True, text=True, timeout=60, env=installed["env"])
    assert any(line.split("\t")[-1] == "herald" for line in r.stdout.splitlines()), r.stderr


def test_uninstall_removes_exactly_what_it_installed(installed, tmp_path):
    prefix, home = installed["prefix"], installed["home"]
    # Something of the user's own beside it stays.
    mine = prefix / "bin" / "mine"
    mine.write_text("#!/bin/sh\n")
    r = subprocess.run([str(ROOT / "Tools" / "install"), "--uninstall", "--prefix", str(prefix)], cwd=ROOT,
                       env=installed["env"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert files_under(prefix) == ["bin/mine"]
    assert [p for p in files_under(home) if "herald" in p] == []
    # A second uninstall has nothing to remove: says so, exit 1.
    again = subprocess.run([str(ROOT / "Tools" / "install"), "--uninstall", "--prefix", str(prefix)], cwd=ROOT,
                           env=installed["env"], capture_output=True, text=True, timeout=60)
    assert again.returncode == 1 and again.stderr.startswith("Tools/install: nothing to uninstall"), again
