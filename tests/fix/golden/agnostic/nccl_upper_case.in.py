import torch
import torch.distributed as dist


def setup(rank, world_size):
    has_gpu = torch.cuda.is_available()
    # Upper-case names: torch reads them in lower case, transfer_to_npu only maps "nccl".
    dist.init_process_group(backend="NCCL" if has_gpu else "GLOO", rank=rank, world_size=world_size)
    group = dist.new_group(backend="Nccl")
    return group


def setup_positional():
    dist.init_process_group("NCCL")


def setup_lower():
    dist.init_process_group(backend="nccl")


BACKEND = "NCCL"  # not at a process-group call: reported, not rewritten
