"""One rule for tests that need something from outside the repository (npm packages, a real
wheel, shellcheck): skip where it cannot be had, fail under CI, where a missing tool would
otherwise turn a gate into a silent skip."""
from __future__ import annotations

import os

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def unavailable(reason: str) -> None:
    """Skip the test with `reason`, or fail it under CI."""
    if in_ci():
        pytest.fail(reason)
    pytest.skip(reason)
