import torch

# Device type chosen at run time: cuda, npu, xpu, ... or cpu.
_device_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"


def device_for(rank, gpu):
    a = torch.device((_device_type + ":{}").format(rank))
    b = (_device_type + ":%d") % gpu
    c = (_device_type + ":") + str(rank)
    d = (_device_type + ':{r}').format(r=rank)
    return a, b, c, d
