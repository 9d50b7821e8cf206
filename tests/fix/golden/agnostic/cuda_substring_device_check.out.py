from contextlib import nullcontext

import torch

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"

device = _device_type  # overridable from the command line, e.g. device = 'cpu'
dtype = 'bfloat16' if torch.accelerator.is_available() and torch.get_device_module(_accel_type or "cuda").is_bf16_supported() else 'float16'
device_type = _device_type if (_accel_type or "cuda") in device else 'cpu'
ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[dtype]
ctx = nullcontext() if device_type == 'cpu' else torch.amp.autocast(device_type=device_type, dtype=ptdtype)
scaler = torch.amp.GradScaler(_accel_type or "cuda", enabled=(dtype == 'float16'))
