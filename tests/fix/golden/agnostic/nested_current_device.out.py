import torch

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"


def buffers(n, dtype):
    device = torch.device(_device_type, torch.accelerator.current_device_index())
    grads = torch.zeros(
        n,
        dtype=dtype,
        device=torch.accelerator.current_device_index(),
        requires_grad=False,
    )
    flags = torch.empty(n, device=torch.accelerator.current_device_index()).to(torch.accelerator.current_device_index())
    return device, grads, flags
