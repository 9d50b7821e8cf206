"""Device-type tests that switch CUDA-only paths on (and, without an accelerator, off)."""
import torch

# The host's accelerator when it is cuda, npu or mps, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu", "mps") else None
_device_type = _accel_type or "cpu"


def precision_for(device: torch.device):
    use_fp16 = device.type in (_accel_type or "cuda",)
    also = device.type not in [_accel_type or "cuda", "mps"]
    exact = device.type == (_accel_type or "cuda")
    other = (_accel_type or "cuda") != device.type
    name = str(device)
    prefixed = name.startswith(_accel_type or "cuda") or not name.startswith(_accel_type or "cuda")
    return use_fp16, also, exact, other, prefixed


def handled(device):
    # Already lists npu: nothing to change.
    return device.type in ("cuda", "npu")
