"""torch.cuda submodules and private helpers reached through import aliases."""
import torch  # expect: none
import torch.cuda.nccl as nccl  # expect: none
import torch.cuda.nvtx as markers  # expect: none
from torch.cuda import _lazy_call, _lazy_init  # expect: none
from torch.cuda import amp as cuda_amp  # expect: none
from torch.cuda.amp import custom_fwd, custom_bwd  # expect: none
from torch.cuda.amp import GradScaler as Scaler  # expect: none
from torch.cuda import memory as cmem  # expect: none
from torch import cuda as tc  # expect: none
from torch.cuda._utils import _get_device_index  # expect: none
import torch.cuda.graphs as graphs  # expect: none
from torch.cuda import _is_in_bad_fork as forked  # expect: none


def restore_rng(state):
    def apply():
        torch.cuda.default_generators[0].set_state(state)  # expect: CU001
    _lazy_call(apply)  # expect: CU112
    _lazy_init()  # expect: CU112


def reduce_all(tensors, outputs):
    nccl.all_reduce(tensors, outputs)  # expect: CU002
    nccl.broadcast(tensors)  # expect: CU002
    markers.range_push("step")  # expect: CU107
    markers.range_pop()  # expect: CU107
    return nccl.is_available(tensors)  # expect: CU002


class Scale(torch.autograd.Function):
    @staticmethod
    @custom_fwd  # expect: AM003
    def forward(ctx, x):
        return x * 2

    @staticmethod
    @custom_bwd  # expect: AM003
    def backward(ctx, g):
        return g * 2


def build(enabled):
    scaler = Scaler(enabled=enabled)  # expect: AM002
    with cuda_amp.autocast(enabled=enabled):  # expect: AM001
        pass
    graph = graphs.CUDAGraph()  # expect: CU106
    used = cmem.memory_allocated()  # expect: CU001
    tc.synchronize()  # expect: CU001
    arch = tc.get_arch_list()  # expect: CU002
    index = _get_device_index("cuda:0")  # expect: CU112, DV001
    bad = forked()  # expect: CU112
    return scaler, graph, used, arch, index, bad


def snapshots(path):
    torch.cuda.memory._record_memory_history(max_entries=1000)  # expect: CU001
    cmem._dump_snapshot(path)  # expect: CU001
    torch.cuda._sleep(100)  # expect: CU112
    return torch.cuda._utils._get_device_index(0)  # expect: CU112


def local_names(_lazy_call):
    # A parameter that shadows the import: not the torch helper.
    _lazy_call(print)  # expect: none
    nccl_ok = True  # expect: none
    return nccl_ok  # expect: none


def unrelated():
    amp = object()  # expect: none
    return amp  # expect: none
