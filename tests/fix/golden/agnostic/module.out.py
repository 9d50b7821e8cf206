import torch.nn as nn
import torch
import torch.distributed as dist

# Device type chosen at run time: cuda, npu, xpu, ... or cpu.
_device_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"


class Trainer:
    def __init__(self, model: nn.Module, rank: int):
        self.model = model.to(torch.device(_device_type, rank))
        self.device = torch.device(_device_type, rank)
        dist.init_process_group(torch.distributed.get_default_backend_for_device(_device_type))
        torch.accelerator.set_device_index(rank)
        self.scaler = torch.amp.GradScaler(_device_type)

    def step(self, x):
        x = x.to(_device_type, non_blocking=True)
        if (x.device.type != "cpu") and torch.accelerator.is_available():
            torch.accelerator.synchronize()
        with torch.autocast(_device_type, enabled=True):
            out = self.model(x.to(f"{_device_type}:0"))
        free = torch.get_device_module(_device_type).memory_allocated()
        name = torch.get_device_module(_device_type).get_device_name(0)
        torch.cuda.manual_seed_all(0)
        return out, f"{_device_type}:{self.rank}", free, name
