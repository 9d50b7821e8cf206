"""Process group backend "hccl" for the emulated npu: every collective runs on gloo over CPU copies.

Registered for the npu device only, as torch_npu registers its HCCL backend, so
`init_process_group("hccl")` works and `init_process_group("nccl")` fails (this torch has no
NCCL) unless transfer_to_npu rewrote the name first.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any, Callable, Sequence

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import _create_work_from_future
from torch.futures import Future

__all__ = ["HcclOverGloo", "register_hccl", "is_hccl_available"]


def _done(result: Any) -> Any:
    fut: Future = Future()
    fut.set_result(result)
    return _create_work_from_future(fut)


def _host(tensors: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    return [t.detach().to("cpu") for t in tensors]


def _back(dest: Sequence[torch.Tensor], host: Sequence[torch.Tensor]) -> None:
    with torch.no_grad():
        for d, h in zip(dest, host):
            d.copy_(h)


class HcclOverGloo(dist.ProcessGroup):
    """A process group named hccl whose collectives are gloo's, applied to host copies."""

    def __init__(self, store: Any, rank: int, size: int, timeout: timedelta):
        super().__init__(rank, size)
        self._gloo = dist.ProcessGroupGloo(store, rank, size, timeout)

    def getBackendName(self) -> str:
        return "hccl"

    def name(self) -> str:
        return "hccl"

    def _run(self, call: Callable[[], Any]) -> None:
        call().wait()

    def broadcast(self, tensors, opts):
        host = _host(tensors)
        self._run(lambda: self._gloo.broadcast(host, opts))
        _back(tensors, host)
        return _done(list(tensors))

    def allreduce(self, tensors, opts):
        host = _host(tensors)
        self._run(lambda: self._gloo.allreduce(host, opts))
        _back(tensors, host)
        return _done(list(tensors))

    def allreduce_coalesced(self, tensors, opts):
        host = _host(tensors)
        self._run(lambda: self._gloo.allreduce_coalesced(host, opts))
        _back(tensors, host)
        return _done(list(tensors))

    def allgather(self, output_lists, inputs, opts):
        host_in = _host(inputs)
        host_out = [_host(lst) for lst in output_lists]
        self._run(lambda: self._gloo.allgather(host_out, host_in, opts))
        for dest, host in zip(output_lists, host_out):
            _back(dest, host)
        return _done(output_lists)

    def _allgather_base(self, output, input, opts):
        host_out, host_in = output.detach().to("cpu"), input.detach().to("cpu")
        self._run(lambda: self._gloo._allgather_base(host_out, host_in, opts))
        _back([output], [host_out])
        return _done([output])

    def reduce_scatter(self, outputs, input_lists, opts):
        host_out = _host(outputs)
        host_in = [_host(lst) for lst in input_lists]
        self._run(lambda: self._gloo.reduce_scatter(host_out, host_in, opts))
        _back(outputs, host_out)
        return _done(list(outputs))

    def _reduce_scatter_base(self, output, input, opts):
        host_out, host_in = output.detach().to("cpu"), input.detach().to("cpu")
        self._run(lambda: self._gloo._reduce_scatter_base(host_out, host_in, opts))
        _back([output], [host_out])
        return _done([output])

    def barrier(self, opts):
        self._run(lambda: self._gloo.barrier(opts))
        return _done([])


def _create(store: Any, rank: int, size: int, timeout: timedelta) -> HcclOverGloo:
    return HcclOverGloo(store, rank, size, timeout)


def is_hccl_available() -> bool:
    return "hccl" in dist.Backend.backend_list


def register_hccl() -> None:
    if not dist.is_available() or is_hccl_available():
        return
    dist.Backend.register_backend("hccl", _create, devices=["npu"])
    dist.is_hccl_available = is_hccl_available
