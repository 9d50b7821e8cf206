import torch

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"


def copy_async(tensor, out):
    if tensor.is_cuda:
        stream = torch.get_device_module(_accel_type or "cuda").Stream()
        with torch.get_device_module(_accel_type or "cuda").stream(stream):
            out.copy_(tensor, non_blocking=True)
        return stream
    if tensor.is_npu:
        out.copy_(tensor, non_blocking=True)
    else:
        out.copy_(tensor)
    return None
