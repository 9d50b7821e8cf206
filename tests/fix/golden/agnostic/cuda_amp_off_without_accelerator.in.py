import torch
from torch.cuda import amp


def train_step(model, batch, optimizer, use_amp):
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
    plain = amp.GradScaler()
    explicit = torch.amp.GradScaler("cuda", init_scale=1024.0)
    with torch.cuda.amp.autocast():
        loss = model(batch).sum()
    with torch.cuda.amp.autocast(use_amp, torch.bfloat16):
        loss = loss + model(batch).sum()
    with torch.autocast("cuda", dtype=torch.float16):
        pass
    with torch.amp.autocast(device_type="cuda"):
        pass
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss, plain, explicit
