"""NCCL chosen in any spelling: another case, an expression, a command-line default, the enum."""
import argparse  # expect: none

import torch  # expect: none
import torch.distributed as dist  # expect: none
from torch.distributed import Backend  # expect: none

parser = argparse.ArgumentParser()  # expect: none
parser.add_argument("--backend", default="nccl", type=str)  # expect: DS001
parser.add_argument("--dist-backend", type=str, default="NCCL")  # expect: DS001
parser.add_argument("--log-backend", default="tensorboard")  # expect: none
args = parser.parse_args()  # expect: none


def start(use_gpu):
    backend = "nccl" if use_gpu else "gloo"  # expect: DS001
    dist.init_process_group(backend=backend)  # expect: DS004
    dist.init_process_group(backend=args.backend)  # expect: DS004
    dist.init_process_group("Nccl")  # expect: DS001, DS004
    dist.init_process_group(backend=dist.Backend.NCCL)  # expect: DS001, DS004
    dist.new_group(backend=Backend.NCCL)  # expect: DS001, DS004
    if dist.get_backend() == torch.distributed.Backend.NCCL:  # expect: DS001
        pass
    if dist.get_backend() == Backend.GLOO:  # expect: none
        pass
    labels = Backend.__members__  # expect: none
    return labels
