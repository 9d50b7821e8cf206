"""Helpers for the emulated npu's own tests: a child interpreter with a private cache folder, and
the check that this machine can build the device at all."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_migrate.emulated_npu import build as emu
from ci_gates import unavailable

SRC = Path(__file__).resolve().parents[2] / "src"


def child_env(tmp_path: Path, **changes: "str | None") -> dict[str, str]:
    """This environment with a cache folder of the test's own, no build folder override, and
    `changes` applied (None removes a variable)."""
    env = {k: v for k, v in os.environ.items() if k not in (emu.BUILD_DIR_ENV, "CXX")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


ENSURE_BUILT = """
import sys
from ascend_migrate.emulated_npu import EmulatedNpuError, ensure_built
try:
    print(ensure_built())
except EmulatedNpuError as exc:
    print(exc)
    sys.exit(3)
"""


def ensure_built_in_child(env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    """`ensure_built()` in a fresh interpreter: exit 0 and the folder, or 3 and the refusal."""
    return subprocess.run([sys.executable, "-c", ENSURE_BUILT], env=env, capture_output=True, text=True,
                          timeout=timeout)


def require_buildable() -> None:
    """Skip (fail under CI) unless torch 2.13.0 and the build tools are here."""
    try:
        import torch
    except ImportError:
        pytest.skip("the emulated npu needs torch")
    if emu.torch_release(torch.__version__) != emu.SUPPORTED_TORCH:
        pytest.skip(f"the emulated npu is written for torch {emu.SUPPORTED_TORCH}; this is {torch.__version__}")
    missing = emu.missing()
    if missing:
        unavailable("the emulated npu cannot be built here: " + "; ".join(missing))
