import torch

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"


def pick_dtype():
    return torch.bfloat16 if (torch.cuda.get_device_capability()[0] >= 8 if torch.version.cuda else _accel_type is not None and getattr(torch.get_device_module(_accel_type), "is_bf16_supported", lambda: False)()) else torch.float16


def pick_amp():
    if (torch.cuda.get_device_capability()[0] >= 8 if torch.version.cuda else _accel_type is not None and getattr(torch.get_device_module(_accel_type), "is_bf16_supported", lambda: False)()):
        amp_dtype = torch.bfloat16
    else:
        amp_dtype = torch.float16
    return amp_dtype


use_bf16 = (torch.cuda.get_device_capability() >= (8, 0) if torch.version.cuda else _accel_type is not None and getattr(torch.get_device_module(_accel_type), "is_bf16_supported", lambda: False)())
use_fp16 = (torch.cuda.get_device_capability()[0] < 8 if torch.version.cuda else not (_accel_type is not None and getattr(torch.get_device_module(_accel_type), "is_bf16_supported", lambda: False)()))
config = dict(bf16=torch.accelerator.is_available() and (8 <= torch.cuda.get_device_capability()[0] if torch.version.cuda else _accel_type is not None and getattr(torch.get_device_module(_accel_type), "is_bf16_supported", lambda: False)()))

# Gates that choose no precision keep the neutral fallback.
flash_ok = (torch.cuda.get_device_capability() if torch.version.cuda else (0, 0))[0] >= 8
major, minor = (torch.cuda.get_device_capability() if torch.version.cuda else (0, 0))
