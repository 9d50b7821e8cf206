"""The emulated npu: an `npu` device backed by host memory and PyTorch's CPU kernels.

It lets a transfer-style port (`import torch_npu`, `from torch_npu.contrib import
transfer_to_npu`) run on a machine without Ascend hardware, so that `ascend-migrate validate
--device emulated-npu` can show that the port puts every tensor, module and process group on a
device named npu and computes what the original computes on CPU. It is not torch_npu and says
nothing about Ascend numerics, speed, memory or operator support (README.md beside this file).

    ensure_built(verbose=False) -> Path     compile once into the user's cache folder, then reuse
    status() -> dict                        built or not, where, for which torch, what is missing
    clean() -> list[Path]                   remove the cached builds
    emulated_env(base=None, device_count=1, release="2.13.0") -> dict
                                            a child process's environment that imports it as torch_npu

Importing this package changes no path: the emulated `torch_npu` (in `site/`) is importable only
in a child started with `emulated_env()`.
"""
from __future__ import annotations

from ascend_migrate.emulated_npu.build import (
    AUTOCAST_ENV,
    BUILD_DIR_ENV,
    DEVICE_COUNT_ENV,
    EMULATED_ENV,
    RELEASE_ENV,
    SITE,
    SOURCES,
    SUPPORTED_TORCH,
    EmulatedNpuError,
    cache_root,
    clean,
    emulated_env,
    ensure_built,
    missing,
    status,
    torch_release,
)

__all__ = [
    "AUTOCAST_ENV",
    "BUILD_DIR_ENV",
    "DEVICE_COUNT_ENV",
    "EMULATED_ENV",
    "RELEASE_ENV",
    "SITE",
    "SOURCES",
    "SUPPORTED_TORCH",
    "EmulatedNpuError",
    "cache_root",
    "clean",
    "emulated_env",
    "ensure_built",
    "missing",
    "status",
    "torch_release",
]
