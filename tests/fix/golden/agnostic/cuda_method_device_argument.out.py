import torch

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"


def place(model, batch, device: torch.device, args):
    model = model.to(_device_type if device is None or not _accel_type else device)
    model = model.to(torch.accelerator.current_device_index())
    head = model.head.to(torch.device(_device_type, 0))
    batch = batch.to(_device_type, non_blocking=True)
    labels = batch.to(_device_type if args.gpu is None or not _accel_type else args.gpu, non_blocking=True)
    mask = batch.to(device=_device_type if device is None or not _accel_type else device)
    return model, head, batch, labels, mask
