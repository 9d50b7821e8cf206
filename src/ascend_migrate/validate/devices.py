"""The thin device layer: parse --device, make the device usable, seed, determinism, versions.

Everything device-specific in validation goes through here; the metric core never sees a
device. torch (and torch_npu for npu devices) is imported only when these functions run.
"""
from __future__ import annotations

import contextlib
import os
import platform
import random
import re
import sys
from typing import Iterator, Optional

_DEVICE_RE = re.compile(r"^(cpu|cuda|npu|emulated-npu)(?::(\d+))?$")
EMULATED = "emulated-npu"


class DeviceError(RuntimeError):
    """The requested device cannot be used on this host; the message says why and what to do."""


def parse_device(spec: str) -> str:
    """Validate 'cpu', 'cuda[:N]', 'npu[:N]' or 'emulated-npu[:N]'; return it normalised
    ('cuda' -> 'cuda:0'). `emulated-npu` is the CPU-backed npu device (ascend_migrate.emulated_npu)."""
    m = _DEVICE_RE.match((spec or "").strip().lower())
    if not m:
        raise ValueError(f"invalid device {spec!r}: use cpu, cuda:N, npu:N or emulated-npu")
    kind, index = m.group(1), m.group(2)
    if kind == "cpu":
        if index not in (None, "0"):
            raise ValueError(f"invalid device {spec!r}: cpu takes no index")
        return "cpu"
    return f"{kind}:{int(index or 0)}"


def on_device(device: str) -> str:
    """The device string the program itself sees: an emulated npu is `npu:N` to the code."""
    return device.replace(EMULATED, "npu", 1) if device.startswith(EMULATED) else device


def device_type(device: str) -> str:
    return device.split(":", 1)[0]


def device_index(device: str) -> int:
    return int(device.split(":", 1)[1]) if ":" in device else 0


def with_index(device: str, index: int) -> str:
    """The same device type with another index (cpu stays cpu)."""
    kind = device_type(device)
    return "cpu" if kind == "cpu" else f"{kind}:{index}"


def prepare_device(device: str) -> None:
    """Import what the device needs and select it; raise DeviceError when it is unusable."""
    import torch

    kind = device_type(device)
    if kind == "cpu":
        return
    if kind == "npu":
        try:
            import torch_npu  # noqa: F401  (registers the npu device)
        except Exception as exc:  # ImportError without CANN, RuntimeError on a CUDA torch, ...
            raise DeviceError(
                f"cannot use {device}: importing torch_npu failed ({type(exc).__name__}: {exc}); "
                "run `ascend-migrate check --device npu:0` for the cause and the fix"
            ) from exc
        mod = getattr(torch, "npu", None)
        if mod is None or not mod.is_available():
            raise DeviceError(f"cannot use {device}: torch.npu.is_available() is False")
        count = mod.device_count()
    else:
        if not torch.cuda.is_available():
            raise DeviceError(f"cannot use {device}: torch.cuda.is_available() is False on this host")
        mod = torch.cuda
        count = mod.device_count()
    index = device_index(device)
    if index >= count:
        raise DeviceError(f"cannot use {device}: only {count} {kind} device(s) visible")
    mod.set_device(index)


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy (when installed) and torch on every device."""
    import torch

    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    np = sys.modules.get("numpy")
    if np is None:
        try:
            import numpy as np  # type: ignore[no-redef]
        except ImportError:
            np = None
    if np is not None:
        np.random.seed(seed % (2**32))
    torch.manual_seed(seed)
    npu = getattr(torch, "npu", None)
    if npu is not None and hasattr(npu, "manual_seed_all"):
        try:
            npu.manual_seed_all(seed)
        except Exception:
            pass


@contextlib.contextmanager
def deterministic(device: str) -> Iterator[None]:
    """Deterministic algorithms (warn-only, so an op without one still runs) for the block."""
    import torch

    kind = device_type(device)
    saved_det = torch.are_deterministic_algorithms_enabled()
    saved_warn = torch.is_deterministic_algorithms_warn_only_enabled()
    saved_cudnn = (torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
    saved_env = os.environ.get("CUBLAS_WORKSPACE_CONFIG")
    if kind == "cuda" and saved_env is None:
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(saved_det, warn_only=saved_warn)
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = saved_cudnn
        if kind == "cuda" and saved_env is None:
            os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)


def autocast(device: str, dtype: Optional[str]):
    """torch.autocast for the device with fp16/bf16, or a null context."""
    if not dtype:
        return contextlib.nullcontext()
    import torch

    torch_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[dtype]
    return torch.autocast(device_type=device_type(device), dtype=torch_dtype)


def synchronize(device: str) -> None:
    import torch

    kind = device_type(device)
    if kind == "cuda":
        torch.cuda.synchronize()
    elif kind == "npu":
        torch.npu.synchronize()


def device_name(device: str) -> str:
    import torch

    kind = device_type(device)
    try:
        if kind == "cuda":
            return torch.cuda.get_device_name(device_index(device))
        if kind == "npu":
            return torch.npu.get_device_name(device_index(device))
    except Exception as exc:
        return f"unknown ({type(exc).__name__})"
    return platform.processor() or platform.machine() or "cpu"


def versions() -> dict[str, Optional[str]]:
    """Versions that matter for reproducing numbers."""
    import torch

    out: dict[str, Optional[str]] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "torch": torch.__version__,
        "torch_npu": None,
        "cuda": getattr(torch.version, "cuda", None),
    }
    mod = sys.modules.get("torch_npu")
    if mod is not None:
        out["torch_npu"] = getattr(mod, "__version__", None)
    try:
        from ascend_migrate import __version__

        out["ascend_migrate"] = __version__
    except Exception:  # pragma: no cover
        pass
    return out
