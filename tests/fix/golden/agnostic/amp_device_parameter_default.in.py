import contextlib
import functools

import torch


def forward_backward(model, batch, scaler, device_type="cuda", amp_dtype=torch.bfloat16):
    # The default switches CUDA autocast on; without CUDA the caller gets plain fp32.
    with torch.autocast(device_type=device_type, dtype=amp_dtype):
        loss = model(batch).mean()
    scaler.scale(loss).backward()
    return loss


def build_scaler(device="cuda", enabled=True):
    return torch.amp.GradScaler(device, enabled=enabled)


def pick_backend(*, device_type: str = "cuda"):
    return "nccl" if device_type == "cuda" else "gloo"


FUSED_ADAM = {"cuda": True, "cpu": False}


def fused_for(device_type="cuda"):
    return FUSED_ADAM[device_type]


def to_device(batch, device="cuda"):
    # A place for tensors only: the port runs on the CPU without an accelerator.
    return batch.to(device)



def get_autocast(precision, device_type="cuda"):
    # Handed on through functools.partial: still the autocast device, so it keeps naming CUDA.
    if precision == "amp_bf16":
        return functools.partial(torch.autocast, device_type=device_type, dtype=torch.bfloat16)
    return contextlib.nullcontext
