"""A separate virtualenv with the real torch-npu wheel, created once and cached.

Key: torch / torch-npu versions and the Python minor. Lives in <repo>/.test-cache/ (ignored
by git). torch is pinned exactly: an unpinned torch would pull multi-GB CUDA wheels.
Under CI (CI=true) a failed install fails the test; elsewhere it skips with the reason.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ci_gates import cache_dir, cache_lock, unavailable

REPO = Path(__file__).resolve().parents[2]
TORCH = "2.13.0"
TORCH_NPU = "2.13.0"


def _unavailable(reason: str):
    unavailable(f"real torch-npu venv unavailable: {reason}")


@pytest.fixture(scope="session")
def torch_npu_venv() -> Path:
    key = f"torch-npu-{TORCH_NPU}-torch-{TORCH}-py{sys.version_info[0]}.{sys.version_info[1]}"
    with cache_lock(key):
        return _built_venv(key)


def _built_venv(key: str) -> Path:
    cache = cache_dir()
    venv = cache / key
    python = venv / "bin" / "python"
    if (venv / ".complete").is_file() and python.exists():
        return python
    cache.mkdir(parents=True, exist_ok=True)
    staging = venv  # built in place: venv scripts hard-code their own path
    shutil.rmtree(staging, ignore_errors=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(staging)], check=True, capture_output=True, timeout=300)
        # A second try without pip's cache: a resolution that failed once (seen here as a
        # ResolutionImpossible while another pip shared the cache) has passed on a retry.
        for extra in ([], ["--no-cache-dir"]):
            res = subprocess.run(
                [str(staging / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q",
                 *extra, f"torch=={TORCH}", f"torch-npu=={TORCH_NPU}"],
                capture_output=True, text=True, timeout=1500,
            )
            if res.returncode == 0:
                break
    except (subprocess.SubprocessError, OSError) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        _unavailable(f"venv creation failed: {exc}")
    if res.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        tail = (res.stderr or res.stdout).strip().splitlines()[-3:]
        _unavailable("pip install failed: " + " | ".join(tail))
    (venv / ".complete").write_text(f"torch=={TORCH}\ntorch-npu=={TORCH_NPU}\n")
    return python
