"""Run under the emulated npu: the zero-copy route against the copying one on the same calls.
Prints one line `PROBE {json}` for tests/standin/test_zero_copy_route.py."""
import json

import torch
import torch_npu
from torch_npu import _C


def calls() -> dict:
    torch.manual_seed(0)
    a = torch.randn(4, 6).to("npu")
    b = torch.randn(6, 3).to("npu")
    out = {}
    out["mm"] = (a @ b).cpu().tolist()
    wrong = torch.empty(2, device="npu")  # out= of the wrong size: the kernel resizes it
    torch.mul(a, a, out=wrong)
    out["out_resized"] = [list(wrong.shape), wrong.device.type, torch.equal(wrong.cpu(), a.cpu() * a.cpu())]
    z = torch.zeros(6, device="npu")
    z[2:4].add_(1)  # an in-place op on a view reaches the base
    out["inplace_view"] = z.cpu().tolist()
    t = a.t()  # a strided operand, passed as it is
    out["strided_sum"] = t.sum(dim=0).cpu().tolist()
    out["mixed_scalar"] = (1.0 - a).device.type
    r = a.clone()
    out["clone_is_new_memory"] = r.data_ptr() != a.data_ptr() and r.device.type == "npu"
    x = torch.randn(8, 8, device="npu", requires_grad=True)
    (x.relu() * 3).sum().backward()
    out["grad"] = x.grad.cpu().tolist()
    return out


_C.count_copying_ops(True)
zero = calls()
copied_on_zero = _C.count_copying_ops(False)
_C.set_zero_copy(False)
copying = calls()
_C.set_zero_copy(True)
before = _C.memory_counters()[0]
big = torch.ones(1024, 1024, device="npu") * 2  # 4 MiB result of a CPU kernel: counted as npu memory
grew = _C.memory_counters()[0] - before
del big
print("PROBE " + json.dumps({"zero": zero, "copying": copying, "copied_on_zero": copied_on_zero,
                             "result_counted": grew >= 4 * 1024 * 1024,
                             "freed": _C.memory_counters()[0] - before < 4 * 1024 * 1024}))
