"""One rule for tests that need something from outside the repository (npm packages, a real
wheel, shellcheck): skip where it cannot be had, fail under CI, where a missing tool would
otherwise turn a gate into a silent skip."""
from __future__ import annotations

import os
from pathlib import Path
from typing import ContextManager

import pytest

REPO = Path(__file__).resolve().parents[1]


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def unavailable(reason: str) -> None:
    """Skip the test with `reason`, or fail it under CI."""
    if in_ci():
        pytest.fail(reason)
    pytest.skip(reason)


def cache_dir() -> Path:
    """Where tests keep what they download or build (npm packages, wheels, venvs, compiled
    extensions). `make` points ASCEND_MIGRATE_TEST_CACHE outside the checkout, so a
    local-folder plugin install (a plain copy of the folder) never carries it; run without make,
    the tests use `<repo>/.test-cache`."""
    configured = os.environ.get("ASCEND_MIGRATE_TEST_CACHE", "").strip()
    return Path(configured) if configured else REPO / ".test-cache"


def user_cache() -> Path:
    """The suite's stand-in for the user's `~/.cache` (XDG_CACHE_HOME, set for the whole run in
    tests/conftest.py): what the tool caches there, the emulated npu's build above all, is built
    once per machine for every test and every walk, and nothing lands in the real ~/.cache."""
    return cache_dir() / "user-cache"


def built_emulated_npu() -> Path:
    """The one build folder of the emulated npu the suite uses, built in a fresh interpreter if
    it is not there yet (tens of seconds once per machine and source, then nothing). It is the
    tool's default folder for this torch (XDG_CACHE_HOME is `user_cache()` in the suite), where
    the skill walks build by themselves, so it compiles once. Fails under CI when it cannot be
    built here."""
    import subprocess
    import sys

    import torch

    from ascend_migrate.emulated_npu import build as emu

    missing = emu.missing()
    if missing:
        unavailable("the emulated npu cannot be built here: " + "; ".join(missing))
    assert os.environ.get("XDG_CACHE_HOME") == str(user_cache()), "tests/conftest.py sets it for the run"
    build_dir = emu.cache_root() / emu.build_key(torch.__version__)
    proc = subprocess.run([sys.executable, "-c", "from ascend_migrate.emulated_npu import ensure_built; ensure_built()"],
                          env={**os.environ, emu.BUILD_DIR_ENV: str(build_dir)}, capture_output=True, text=True,
                          timeout=900)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        unavailable(f"the emulated npu did not build:\n{tail}")
    return build_dir


def cache_lock(name: str) -> ContextManager[None]:
    """An exclusive lock named `name` in the test cache, held while filling it: the suite runs on
    several workers, and two of them must not install the same tool into one folder at once.
    The second waits, then finds the folder complete."""
    from ascend_migrate.file_lock import exclusive

    return exclusive(cache_dir() / f"{name}.lock")
