"""One rule for tests that need something from outside the repository (npm packages, a real
wheel, shellcheck): skip where it cannot be had, fail under CI, where a missing tool would
otherwise turn a gate into a silent skip."""
from __future__ import annotations

import os
from pathlib import Path

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
