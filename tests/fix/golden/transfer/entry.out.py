"""Training entry point."""
from __future__ import annotations

import torch_npu
from torch_npu.contrib import transfer_to_npu
import torch  # the framework
from torch.cuda import amp


def main():
    major, minor = (torch.cuda.get_device_capability() or (0, 0))
    fast = (torch.cuda.get_device_properties(0).major or 0) >= 8  # keep this comment
    name = torch.cuda.get_device_name(0)
    peer = torch.cuda.can_device_access_peer(0, 1)
    scaler = torch.amp.GradScaler("npu", 2.0**16, 2.0, 0.5, 2000, True)
    with torch.autocast("npu"):
        pass
    with torch.autocast("npu", dtype=torch.bfloat16):
        pass
    s2 = torch.amp.GradScaler("npu")
    g = torch.cuda.CUDAGraph()
    on = x.device.type in ("cuda", "npu")
    off = x.device.type not in ("cuda", "npu")
    gpu = str(x.device).startswith(("cuda", "npu"))
    loader = torch.utils.data.DataLoader(ds, pin_memory=True)
    os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1"
    return major, minor, fast, name, peer, scaler, g, on, off, gpu, loader


if __name__ == "__main__":
    main()
