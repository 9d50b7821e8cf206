"""Run under the stand-in (not collected by pytest): exercise the device and print what
happened as JSON, so the test can assert on it from its own process."""
import json
import os
import sys
import tempfile
import warnings

import torch
import torch.distributed as dist

launched_as_emulated = os.environ.pop("ASCEND_MIGRATE_EMULATED_NPU", None)  # the fixture sets it too
import torch_npu  # noqa: E402  (and sets it again itself)

out = {"launched_as_emulated": launched_as_emulated,
       "emulated": getattr(torch_npu, "__emulated__", False),
       "emulated_env": os.environ.get("ASCEND_MIGRATE_EMULATED_NPU")}


def outcome(fn):
    try:
        return {"ok": repr(fn())}
    except Exception as exc:  # the class and text are what the test checks
        return {"error": type(exc).__name__, "message": str(exc).splitlines()[0]}


npu = torch.npu
out["device_count"] = npu.device_count()
out["is_available"] = npu.is_available()
npu.set_device(1)
out["current_after_set"] = npu.current_device()
out["new_tensor_device"] = str(torch.ones(2, device="npu").device)
npu.set_device(0)
npu.synchronize()
npu.manual_seed(3)
before = npu.memory_allocated()
keep = torch.empty(1024, 1024, device="npu")
out["allocated_grew_by"] = npu.memory_allocated() - before
out["peak_at_least"] = npu.max_memory_allocated() >= npu.memory_allocated()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out["capability"] = npu.get_device_capability()
out["capability_warned"] = any("TORCH_NPU_DEVICE_CAPABILITY" in str(w.message) for w in caught)
out["props_major"] = npu.get_device_properties(0).major
out["set_device_cuda"] = outcome(lambda: npu.set_device("cuda:0"))
out["mixed_devices"] = outcome(lambda: torch.ones(3, device="npu") + torch.ones(3))
out["two_npus"] = outcome(lambda: torch.ones(3, device="npu:0") + torch.ones(3, device="npu:1"))
out["cpu_scalar_ok"] = outcome(lambda: (torch.ones(3, device="npu") * torch.tensor(2.0)).sum().item())
out["accelerator"] = str(torch.accelerator.current_accelerator())
store = tempfile.mktemp()
out["nccl_without_patch"] = outcome(lambda: dist.init_process_group(
    "nccl", init_method=f"file://{store}", rank=0, world_size=1))
out["hccl_registered"] = "hccl" in dist.Backend.backend_list

if "--transfer" in sys.argv:
    from torch_npu.contrib import transfer_to_npu as ttn

    out["coverage_version"] = ttn.COVERAGE.version
    out["applied"] = sorted(ttn.APPLIED)
    out["skipped"] = ttn.SKIPPED
    out["cuda_tensor"] = str(torch.zeros(2, device="cuda").device)
    out["tensor_cuda_method"] = str(torch.zeros(2).cuda().device)
    out["is_cuda"] = torch.zeros(2).cuda().is_cuda
    out["cuda_is_available"] = torch.cuda.is_available()
    out["cuda_capability"] = torch.cuda.get_device_capability()
    out["to_int"] = str(torch.zeros(2).to(0).device)
    dist.init_process_group("nccl", init_method=f"file://{store}.2", rank=0, world_size=1)
    out["backend_after_patch"] = dist.get_backend()
    t = torch.ones(4, device="cuda")
    dist.all_reduce(t)
    out["all_reduce"] = t.cpu().tolist()
    dist.destroy_process_group()

print("PROBE " + json.dumps(out))
