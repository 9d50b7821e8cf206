import torch
from torch.cuda import amp

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"


def train_step(model, batch, optimizer, use_amp):
    scaler = torch.amp.GradScaler(_accel_type or "cuda", enabled=use_amp)
    plain = torch.amp.GradScaler(_accel_type or "cuda")
    explicit = torch.amp.GradScaler(_accel_type or "cuda", init_scale=1024.0)
    with torch.autocast(_accel_type or "cuda"):
        loss = model(batch).sum()
    with torch.autocast(_accel_type or "cuda", enabled=use_amp, dtype=torch.bfloat16):
        loss = loss + model(batch).sum()
    with torch.autocast(_accel_type or "cuda", dtype=torch.float16):
        pass
    with torch.amp.autocast(device_type=_accel_type or "cuda"):
        pass
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss, plain, explicit
