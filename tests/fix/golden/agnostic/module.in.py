import torch.nn as nn
import torch
import torch.distributed as dist


class Trainer:
    def __init__(self, model: nn.Module, rank: int):
        self.model = model.cuda(rank)
        self.device = torch.device("cuda", rank)
        dist.init_process_group("nccl")
        torch.cuda.set_device(rank)
        self.scaler = torch.cuda.amp.GradScaler()

    def step(self, x):
        x = x.cuda(non_blocking=True)
        if x.is_cuda and torch.cuda.is_available():
            torch.cuda.synchronize()
        with torch.cuda.amp.autocast(enabled=True):
            out = self.model(x.to("cuda:0"))
        free = torch.cuda.memory_allocated()
        name = torch.cuda.get_device_name(0)
        torch.cuda.manual_seed_all(0)
        return out, f"cuda:{self.rank}", free, name
