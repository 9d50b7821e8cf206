import torch

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"

# A table that already has an npu entry handles npu itself: left as it is.
BACKENDS = {"cuda": "nccl", "cpu": "gloo", "npu": "hccl"}

# Without one, the cuda key names the accelerator (and stays "cuda" without one).
FAST_PATHS = {"cpu": False, _accel_type or "cuda": True}


def uses_fast_path(device: torch.device) -> bool:
    return FAST_PATHS.get(device.type, False)
