import time

import torch

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"


def timed(fn, *args):
    torch.accelerator.synchronize() if _accel_type else None
    start = time.perf_counter()
    out = fn(*args)
    torch.accelerator.synchronize(0) if _accel_type else None
    used = (torch.get_device_module(_accel_type).max_memory_allocated() if _accel_type else 0) / 2**20
    stats = torch.get_device_module(_accel_type).memory_stats() if _accel_type else {}
    torch.get_device_module(_accel_type).reset_peak_memory_stats() if _accel_type else None
    torch.get_device_module(_accel_type).empty_cache() if _accel_type else None
    print(f"{time.perf_counter() - start:.3f}s {used:.1f} MiB {len(stats)}")
    return out, (torch.get_device_module(_accel_type).memory_allocated() if _accel_type else 0)
