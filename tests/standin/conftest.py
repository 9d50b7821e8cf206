"""The npu stand-in for these tests: built once (cached with the other test downloads and builds, see ci_gates.cache_dir), then handed out as
an environment for subprocesses. The pytest process itself never imports the stand-in, so no
other test can see a `torch_npu`."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

from ci_gates import cache_dir, unavailable

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
if str(TESTS) not in sys.path:  # npu_standin is a test-only package beside this folder
    sys.path.insert(0, str(TESTS))

from npu_standin import SUPPORTED_TORCH, standin_env, torch_release  # noqa: E402


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
        env = standin_env(self.build_dir, device_count=device_count, release=release)
        env["NPU_STANDIN_AUTOCAST"] = "1" if autocast else "0"
        env.update(COMPARE_ENV)
        env.update(extra or {})
        return env

    def run(self, args: list[str], cwd: Path, timeout: float = 240, **env_options) -> subprocess.CompletedProcess:
        """Run `python args...` in `cwd` with the stand-in importable."""
        return subprocess.run([sys.executable, *args], cwd=cwd, env=self.env(**env_options),
                              capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def npu_standin() -> StandIn:
    """Build the stand-in (about 20 s the first time, under a second when cached)."""
    try:
        import torch
    except ImportError:
        pytest.skip("the npu stand-in needs torch")
    if torch_release(torch.__version__) != SUPPORTED_TORCH:
        pytest.skip(f"the npu stand-in is written against torch {SUPPORTED_TORCH}'s internals; "
                    f"this is torch {torch.__version__}")
    missing = [tool for tool in ("c++", "ninja") if shutil.which(tool) is None and not _ninja_module(tool)]
    if missing:
        unavailable(f"building the npu stand-in needs {' and '.join(missing)} (pip install '.[test]' brings ninja)")
    build_dir = cache_dir() / "npu-standin" / f"torch-{torch.__version__}"
    build_dir.mkdir(parents=True, exist_ok=True)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from npu_standin.build import load_extension; "
            "load_extension(sys.argv[2])")
    env = dict(os.environ)
    bin_dir = str(Path(sys.executable).parent)  # the ninja wheel's launcher lives beside python
    env["PATH"] = os.pathsep.join([bin_dir, env.get("PATH", "")])
    proc = subprocess.run([sys.executable, "-c", code, str(TESTS), str(build_dir)], env=env,
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        unavailable(f"the npu stand-in did not build:\n{tail}")
    return StandIn(build_dir)


def _ninja_module(tool: str) -> bool:
    if tool != "ninja":
        return False
    return (Path(sys.executable).parent / "ninja").exists()
