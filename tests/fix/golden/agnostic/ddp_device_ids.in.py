import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def wrap(model: torch.nn.Module) -> torch.nn.Module:
    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = model.cuda(local_rank)
    # the index is kept for an accelerator; a CPU module takes none
    model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=True)
    return model


def wrap_again(model: torch.nn.Module, gpus: list) -> torch.nn.Module:
    return torch.nn.parallel.DistributedDataParallel(model, gpus, None)
