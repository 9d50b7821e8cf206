import torch.nn as nn
import torch
import torch.distributed as dist

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"


class Trainer:
    def __init__(self, model: nn.Module, rank: int):
        self.model = model.to(_device_type if rank is None or not _accel_type else rank)
        self.device = torch.device(_device_type, rank)
        dist.init_process_group(torch.distributed.get_default_backend_for_device(_device_type))
        torch.accelerator.set_device_index(rank) if _accel_type else None
        self.scaler = torch.amp.GradScaler(_accel_type or "cuda")

    def step(self, x):
        x = x.to(_device_type, non_blocking=True)
        if (x.device.type == (_accel_type or "cuda")) and torch.accelerator.is_available():
            torch.accelerator.synchronize() if _accel_type else None
        with torch.autocast(_accel_type or "cuda", enabled=True):
            out = self.model(x.to(f"{_device_type}:0"))
        free = torch.get_device_module(_accel_type).memory_allocated() if _accel_type else 0
        name = torch.get_device_module(_accel_type or "cuda").get_device_name(0)
        torch.cuda.manual_seed_all(0)
        return out, f"{_device_type}:{self.rank}", free, name
