import torch
# Device type chosen at run time: cuda, npu, xpu, ... or cpu.
_device_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

@functools.lru_cache(
    maxsize=None,
)
def pick_device():
    return _device_type


def place(tensor):
    return tensor.to(device=_device_type)
