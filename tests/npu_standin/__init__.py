"""A CPU-backed `npu` device that lets transfer-style ports run in tests.

Test-only and never installed: the importable `torch_npu` lives in `site/`, which is put on
`PYTHONPATH` only by `standin_env()` for a subprocess that runs a port. See README.md beside
this file for what a pass on the stand-in means and what it does not.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from .build import BUILD_DIR_ENV, SUPPORTED_TORCH, load_extension, torch_release

HERE = Path(__file__).resolve().parent
SITE = HERE / "site"
REPO = HERE.parents[1]
SRC = REPO / "src"
DEVICE_COUNT_ENV = "NPU_STANDIN_DEVICE_COUNT"
RELEASE_ENV = "NPU_STANDIN_RELEASE"

__all__ = ["BUILD_DIR_ENV", "SITE", "SUPPORTED_TORCH", "load_extension", "standin_env", "torch_release"]


def standin_env(build_dir: Path, *, device_count: int = 1, release: str = SUPPORTED_TORCH,
                base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a subprocess that sees the stand-in as `torch_npu`.

    `release` picks the torch_npu release whose coverage data drives `transfer_to_npu`.
    """
    env = dict(os.environ if base is None else base)
    parts = [str(SITE), str(SRC)]
    if env.get("PYTHONPATH"):
        parts.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(parts)
    # torch's extension loader runs `ninja`; the ninja wheel puts it beside the interpreter.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env[BUILD_DIR_ENV] = str(build_dir)
    env[DEVICE_COUNT_ENV] = str(device_count)
    env[RELEASE_ENV] = release
    env["ASCEND_MIGRATE_EMULATED_NPU"] = "1"  # results produced here are labelled emulated
    return env
