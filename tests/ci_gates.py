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


def emulated_npu_build_dir(torch_version: str) -> Path:
    """The one build folder of the emulated npu the suite uses: the tool's default location under
    `user_cache()` (the skill walks build there by themselves), so it compiles once."""
    from ascend_migrate.emulated_npu import build as emu

    return user_cache() / "ascend-migrate" / "emulated-npu" / emu.build_key(torch_version)


def cache_lock(name: str) -> ContextManager[None]:
    """An exclusive lock named `name` in the test cache, held while filling it: the suite runs on
    several workers, and two of them must not install the same tool into one folder at once.
    The second waits, then finds the folder complete."""
    from ascend_migrate.file_lock import exclusive

    return exclusive(cache_dir() / f"{name}.lock")
