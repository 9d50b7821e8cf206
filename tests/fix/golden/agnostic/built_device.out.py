import torch

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"


def device_for(rank, gpu):
    a = torch.device((_device_type + ":{}").format(rank))
    b = (_device_type + ":%d") % gpu
    c = (_device_type + ":") + str(rank)
    d = (_device_type + ':{r}').format(r=rank)
    return a, b, c, d
