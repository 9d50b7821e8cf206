"""`torch.npu` of the emulated npu: device queries, RNG, memory statistics, streams, AMP.

Answers the way torch_npu 2.13 does where that is known (get_device_capability returns None
unless TORCH_NPU_DEVICE_CAPABILITY is set; set_device refuses a cuda device; property fields
that Ascend leaves unset are None). Streams and events exist but do nothing.
"""
from __future__ import annotations

import contextlib
import os
import re
import warnings
from dataclasses import dataclass
from typing import Any, Optional

import torch

import torch_npu
from torch_npu.npu import amp  # noqa: F401

_C = torch_npu._C
_TOTAL_MEMORY = 64 * 2**30  # what the emulated card reports; nothing enforces it
_initial_seed = 0
_memory_fraction = 1.0

__all__ = [
    "is_available", "device_count", "current_device", "set_device", "synchronize", "is_initialized",
    "init", "device", "device_of", "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
    "get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all", "get_device_name",
    "get_device_properties", "get_device_capability", "mem_get_info", "memory_allocated",
    "max_memory_allocated", "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
    "reset_max_memory_allocated", "reset_max_memory_cached", "memory_stats", "memory_summary",
    "empty_cache", "utilization", "is_bf16_supported", "get_amp_supported_dtype", "Stream", "Event",
    "current_stream", "default_stream", "stream", "set_stream", "set_per_process_memory_fraction",
    "can_device_access_peer", "amp", "get_soc_version",
]


def _index(device: Any = None, *, optional: bool = True) -> int:
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    dev = torch.device(device)
    if dev.type != "npu":
        raise ValueError(f"Expected a npu device, but got: {dev}")
    return dev.index if dev.index is not None else current_device()


def _check_id(index: int) -> int:
    if not 0 <= index < device_count():
        raise AssertionError("Invalid device id")
    return index


def is_available() -> bool:
    return device_count() > 0


def device_count() -> int:
    return int(_C.device_count())


def current_device() -> int:
    return int(_C.current_device())


def set_device(device: Any) -> None:
    index = _index(device)
    if index >= 0:
        _C.set_device(index)


def synchronize(device: Any = None) -> None:
    """Every kernel has finished when it returns; nothing to wait for."""


def is_initialized() -> bool:
    return True


def init() -> None:
    pass


def _lazy_init() -> None:
    pass


class device:
    """Context manager that makes `device` current, like torch.cuda.device."""

    def __init__(self, device: Any):
        self.idx = _index(device) if device is not None else -1
        self.prev_idx = -1

    def __enter__(self) -> None:
        self.prev_idx = current_device()
        if self.idx >= 0:
            set_device(self.idx)

    def __exit__(self, *exc: Any) -> None:
        if self.idx >= 0:
            set_device(self.prev_idx)


class device_of(device):
    def __init__(self, obj: torch.Tensor):
        super().__init__(obj.get_device() if obj.device.type == "npu" else -1)


# RNG: every kernel runs on CPU and draws from torch's CPU generator, so the npu generators
# below only answer queries; seeding them never disturbs the CPU stream a port shares with CPU.
def manual_seed(seed: int) -> None:
    global _initial_seed
    _initial_seed = int(seed)


def manual_seed_all(seed: int) -> None:
    manual_seed(seed)


def seed() -> None:
    manual_seed(torch.seed())


def seed_all() -> None:
    seed()


def initial_seed() -> int:
    return _initial_seed


def _is_in_bad_fork() -> bool:
    return False


def get_rng_state(device: Any = "npu") -> torch.Tensor:
    return torch.get_rng_state()


def set_rng_state(new_state: torch.Tensor, device: Any = "npu") -> None:
    torch.set_rng_state(new_state)


def get_rng_state_all() -> list[torch.Tensor]:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(states: list[torch.Tensor]) -> None:
    for state in states[:1]:
        set_rng_state(state)


default_generators: tuple = ()


@dataclass(frozen=True)
class _NPUDeviceProperties:
    """Fields torch_npu fills; the CUDA-only ones it leaves unset are None."""

    name: str
    total_memory: int
    cube_core_num: int = 24
    vector_core_num: int = 48
    L2_cache_size: int = 192 * 2**20
    major: Optional[int] = None
    minor: Optional[int] = None
    multi_processor_count: Optional[int] = None
    is_multi_gpu_board: Optional[bool] = None
    is_integrated: Optional[bool] = None
    max_threads_per_multi_processor: Optional[int] = None
    warp_size: Optional[int] = None
    regs_per_multiprocessor: Optional[int] = None
    gcnArchName: Optional[str] = None


def get_device_name(device_name: Any = None) -> str:
    _check_id(_index(device_name))
    return "Ascend910B1 (emulated on CPU)"


def get_device_properties(device_name: Any = None) -> _NPUDeviceProperties:
    _check_id(_index(device_name))
    return _NPUDeviceProperties(name=get_device_name(device_name), total_memory=_TOTAL_MEMORY)


def get_device_capability(device: Any = None) -> Optional[tuple[int, int]]:
    """None with a warning, as torch_npu does, unless TORCH_NPU_DEVICE_CAPABILITY="X.Y"."""
    value = os.environ.get("TORCH_NPU_DEVICE_CAPABILITY")
    if value is None:
        warnings.warn(
            "You can set the device capability via the environment variable TORCH_NPU_DEVICE_CAPABILITY. "
            "The return value of get_device_capability does not represent the actual capability.")
        return None
    match = re.match(r"^(\d+)\.(\d+)$", value)
    if not match:
        warnings.warn(f"can't parse TORCH_NPU_DEVICE_CAPABILITY={value!r}")
        return None
    return int(match[1]), int(match[2])


def get_soc_version() -> int:
    return 220


def mem_get_info(device: Any = None) -> tuple[int, int]:
    _check_id(_index(device))
    return _TOTAL_MEMORY - memory_allocated(), _TOTAL_MEMORY


def memory_allocated(device: Any = None) -> int:
    return int(_C.memory_counters()[0])


def max_memory_allocated(device: Any = None) -> int:
    return int(_C.memory_counters()[1])


memory_reserved = memory_allocated
max_memory_reserved = max_memory_allocated


def reset_peak_memory_stats(device: Any = None) -> None:
    _C.reset_peak()


reset_max_memory_allocated = reset_peak_memory_stats
reset_max_memory_cached = reset_peak_memory_stats


def memory_stats(device: Any = None) -> dict[str, int]:
    allocated, peak, calls = (int(v) for v in _C.memory_counters())
    return {"allocated_bytes.all.current": allocated, "allocated_bytes.all.peak": peak,
            "reserved_bytes.all.current": allocated, "reserved_bytes.all.peak": peak,
            "num_alloc_retries": 0, "num_ooms": 0, "allocation.all.allocated": calls}


def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
    stats = memory_stats(device)
    return "\n".join(f"{k}: {v}" for k, v in stats.items())


def empty_cache() -> None:
    pass


def utilization(device: Any = None) -> int:
    _check_id(_index(device))
    return 0


def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
    global _memory_fraction
    _memory_fraction = float(fraction)


def can_device_access_peer(device_id: int, peer_device_id: int) -> bool:
    _check_id(device_id)
    _check_id(peer_device_id)
    return True


def is_bf16_supported(including_emulation: bool = False) -> bool:
    return True


def get_amp_supported_dtype() -> list[torch.dtype]:
    return [torch.float16, torch.bfloat16, torch.float32]


class Stream(torch.Stream):
    """A stream that runs nothing asynchronously."""

    def __new__(cls, device: Any = None, priority: int = 0, **kwargs: Any):
        index = _index(device) if device is not None else current_device()
        return super().__new__(cls, device=torch.device("npu", index), priority=priority)

    def wait_stream(self, stream: Any) -> None:
        pass

    def synchronize(self) -> None:
        pass


class Event(torch.Event):
    def __new__(cls, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        return super().__new__(cls, device="npu", enable_timing=enable_timing)


def current_stream(device: Any = None) -> torch.Stream:
    return torch.Stream(device=torch.device("npu", _index(device)))


default_stream = current_stream


def set_stream(stream: Any) -> None:
    pass


@contextlib.contextmanager
def stream(stream: Any = None):
    yield


StreamContext = stream


def is_autocast_enabled() -> bool:
    return torch.is_autocast_enabled("npu")


def set_autocast_enabled(enabled: bool) -> None:
    torch.set_autocast_enabled("npu", enabled)


def get_autocast_dtype() -> torch.dtype:
    return torch.get_autocast_dtype("npu")


def set_autocast_dtype(dtype: torch.dtype) -> None:
    torch.set_autocast_dtype("npu", dtype)


__all__ += ["is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
            "StreamContext", "default_generators", "get_rng_state_all", "set_rng_state_all"]


# Counters and switches a port may call; the emulated npu keeps no cache, no graphs, no dumps.
memory_cached = memory_reserved
max_memory_cached = max_memory_reserved


def reset_accumulated_memory_stats(device: Any = None) -> None:
    pass


def memory_stats_as_nested_dict(device: Any = None) -> dict[str, Any]:
    return {"allocated_bytes": {"all": {"current": memory_allocated(), "peak": max_memory_allocated()}}}


def memory_snapshot(mempool_id: Any = None) -> list:
    return []


def ipc_collect() -> None:
    pass


def is_current_stream_capturing() -> bool:
    return False


_sync_debug_mode = 0


def get_sync_debug_mode() -> int:
    return _sync_debug_mode


def set_sync_debug_mode(debug_mode: Any) -> None:
    global _sync_debug_mode
    _sync_debug_mode = {"default": 0, "warn": 1, "error": 2}.get(debug_mode, debug_mode)


def get_per_process_memory_fraction(device: Any = None) -> float:
    return _memory_fraction


def get_allocator_backend() -> str:
    return "native"


class _Hf32Switch:
    """torch.npu.matmul / torch.npu.conv: the HF32 switches (no effect on CPU kernels)."""

    def __init__(self, default: bool):
        self.allow_hf32 = default


matmul = _Hf32Switch(False)
conv = _Hf32Switch(True)

__all__ += ["memory_cached", "max_memory_cached", "reset_accumulated_memory_stats",
            "memory_stats_as_nested_dict", "memory_snapshot", "ipc_collect", "is_current_stream_capturing",
            "get_sync_debug_mode", "set_sync_debug_mode", "get_per_process_memory_fraction",
            "get_allocator_backend", "matmul", "conv"]
