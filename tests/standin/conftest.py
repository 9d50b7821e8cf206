"""The emulated npu for these tests: built once per torch and source into the test cache (see
ci_gates.built_emulated_npu), then handed out as an environment for subprocesses. The pytest process
itself never imports the emulated torch_npu, so no other test can see a `torch_npu`."""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

from ascend_migrate.emulated_npu import build as emu
from ci_gates import built_emulated_npu

SUPPORTED_TORCH = emu.SUPPORTED_TORCH


#: The environment both sides of a comparison run with. CPU kernels split reductions by thread
#: count, so bit-for-bit comparisons need the same count on both sides (one is also kind to CI).
COMPARE_ENV = {"OMP_NUM_THREADS": "1"}


def plain_env() -> dict[str, str]:
    """The environment of a reference run on CPU (no stand-in)."""
    return {**os.environ, **COMPARE_ENV}


@dataclass(frozen=True)
class StandIn:
    """A built stand-in: `env()` is what a subprocess needs to import it as torch_npu."""

    build_dir: Path

    def env(self, *, device_count: int = 1, autocast: bool = True, release: str = SUPPORTED_TORCH,
            extra: Optional[dict[str, str]] = None) -> dict[str, str]:
        env = emu.emulated_env({**os.environ, emu.BUILD_DIR_ENV: str(self.build_dir)},
                               device_count=device_count, release=release)
        env[emu.AUTOCAST_ENV] = "1" if autocast else "0"
        env.update(COMPARE_ENV)
        env.update(extra or {})
        return env

    def run(self, args: list[str], cwd: Path, timeout: float = 240, **env_options) -> subprocess.CompletedProcess:
        """Run `python args...` in `cwd` with the stand-in importable."""
        return subprocess.run([sys.executable, *args], cwd=cwd, env=self.env(**env_options),
                              capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def npu_standin() -> StandIn:
    """Build the emulated npu (30 to 50 s on 2 cores the first time, nothing when cached)."""
    try:
        import torch
    except ImportError:
        pytest.skip("the emulated npu needs torch")
    if emu.torch_release(torch.__version__) != SUPPORTED_TORCH:
        pytest.skip(f"the emulated npu is written against torch {SUPPORTED_TORCH}'s internals; "
                    f"this is torch {torch.__version__}")
    build_dir = built_emulated_npu()
    return StandIn(build_dir)
