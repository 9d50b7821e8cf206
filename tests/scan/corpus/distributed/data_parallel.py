"""DataParallel: wrapping a model is reported; asking whether it is wrapped is not."""
import torch  # expect: none
import torch.nn as nn  # expect: none
from torch.nn import DataParallel  # expect: none
from torch.nn.parallel import DataParallel as DP, DistributedDataParallel as DDP  # expect: none
import torch.distributed as dist  # expect: none


def wrap(model, devices):
    if len(devices) > 1:
        model = nn.DataParallel(model, device_ids=devices)  # expect: DS003
    other = DP(model)  # expect: DS003
    third = torch.nn.parallel.data_parallel(model, torch.ones(1))  # expect: DS003
    return model, other, third


def unwrap(model):
    if isinstance(model, DataParallel):  # expect: none
        model = model.module  # expect: none
    if isinstance(model, (DP, DDP)):  # expect: none
        model = model.module  # expect: none
    if issubclass(type(model), nn.DataParallel):  # expect: none
        model = model.module  # expect: none
    if isinstance(model, torch.nn.DataParallel) or isinstance(model, DDP):  # expect: none
        model = model.module  # expect: none
    return model


def setup(rank, world):
    dist.init_process_group("nccl", rank=rank, world_size=world)  # expect: DS001, DS004
    group = dist.new_group(backend="nccl")  # expect: DS001, DS004
    if dist.is_nccl_available():  # expect: DS005
        pass
    return group
