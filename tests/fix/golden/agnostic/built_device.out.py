import torch

# The host's accelerator (cuda, npu, xpu, ...), or None without one; tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_device_type = _accel_type or "cpu"


def device_for(rank, gpu):
    a = torch.device((_device_type + ":{}").format(rank))
    b = (_device_type + ":%d") % gpu
    c = (_device_type + ":") + str(rank)
    d = (_device_type + ':{r}').format(r=rank)
    return a, b, c, d
