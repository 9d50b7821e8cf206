import time

import torch

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"


def timed(step, device_type):
    # The test picks the CUDA wait on a CUDA device; on NPU the port's test is true too.
    wait = torch.get_device_module(_accel_type or "cuda").synchronize if device_type == (_accel_type or "cuda") else (lambda: None)
    release = torch.get_device_module(_accel_type or "cuda").empty_cache if device_type == (_accel_type or "cuda") else None
    start = time.perf_counter()
    step()
    wait()
    if release is not None:
        release()
    return time.perf_counter() - start
