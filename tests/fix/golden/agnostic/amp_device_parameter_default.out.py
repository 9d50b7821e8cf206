import contextlib
import functools

import torch

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"


def forward_backward(model, batch, scaler, device_type=_accel_type or "cuda", amp_dtype=torch.bfloat16):
    # The default switches CUDA autocast on; without CUDA the caller gets plain fp32.
    with torch.autocast(device_type=device_type, dtype=amp_dtype):
        loss = model(batch).mean()
    scaler.scale(loss).backward()
    return loss


def build_scaler(device=_accel_type or "cuda", enabled=True):
    return torch.amp.GradScaler(device, enabled=enabled)


def pick_backend(*, device_type: str = _accel_type or "cuda"):
    return "nccl" if device_type == (_accel_type or "cuda") else "gloo"


FUSED_ADAM = {_accel_type or "cuda": True, "cpu": False}


def fused_for(device_type=_accel_type or "cuda"):
    return FUSED_ADAM[device_type]


def to_device(batch, device=_device_type):
    # A place for tensors only: the port runs on the CPU without an accelerator.
    return batch.to(device)



def get_autocast(precision, device_type=_accel_type or "cuda"):
    # Handed on through functools.partial: still the autocast device, so it keeps naming CUDA.
    if precision == "amp_bf16":
        return functools.partial(torch.autocast, device_type=device_type, dtype=torch.bfloat16)
    return contextlib.nullcontext
