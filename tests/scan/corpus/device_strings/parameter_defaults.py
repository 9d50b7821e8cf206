import torch


def loss_step(model, batch, device_type="cuda", dtype=torch.float16):  # expect: DV001
    with torch.autocast(device_type=device_type, dtype=dtype):  # expect: none
        return model(batch).mean()


def evaluate(model, batch, device="cpu"):  # expect: none
    return model(batch.to(device))


def timed(step, device_type="cuda"):  # expect: DV001
    wait = torch.cuda.synchronize if device_type == "cuda" else None  # expect: CU001, DV004
    step()
    if wait is not None:
        wait()
