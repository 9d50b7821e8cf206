"""Build (or load from cache) the C++ half of the npu stand-in.

Shared by the test fixture, which builds once per session so a broken toolchain is reported as
one clear skip (or failure under CI) rather than as a crash inside a port, and by the stand-in's
`torch_npu`, which loads the cached build in every process it runs in.
"""
from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "csrc" / "npu_device.cpp"
#: The extension reaches into PyTorch internals (dispatcher, hooks, allocator); it is written
#: and checked against exactly this release.
SUPPORTED_TORCH = "2.13.0"
#: Environment variable naming the build directory (set by the fixture for subprocesses).
BUILD_DIR_ENV = "NPU_STANDIN_BUILD_DIR"
EXTENSION_NAME = "npu_standin_device"
#: Where the build goes when nobody says: the repository's git-ignored test cache.
DEFAULT_BUILD_DIR = HERE.parents[1] / ".test-cache" / "npu-standin" / "default"


def torch_release(version: str) -> str:
    """'2.13.0+cpu' -> '2.13.0'."""
    return version.split("+", 1)[0]


def load_extension(build_dir: Path | str | None = None, verbose: bool = False) -> ModuleType:
    """Compile the device (about 12 s at -O1 the first time) or load the cached build."""
    import torch
    from torch.utils import cpp_extension

    if torch_release(torch.__version__) != SUPPORTED_TORCH:
        raise ImportError(
            f"the npu stand-in is written for torch {SUPPORTED_TORCH}, this is torch {torch.__version__}"
        )
    directory = Path(build_dir or os.environ.get(BUILD_DIR_ENV) or DEFAULT_BUILD_DIR)
    directory.mkdir(parents=True, exist_ok=True)
    return cpp_extension.load(
        name=EXTENSION_NAME,
        sources=[str(SOURCE)],
        build_directory=str(directory),
        extra_cflags=["-O1"],
        verbose=verbose,
    )
