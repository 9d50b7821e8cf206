"""Device queries rewritten for any device."""
from __future__ import annotations

import torch  # the framework
from torch.cuda import amp

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"


def main():
    major, minor = (torch.cuda.get_device_capability() if torch.version.cuda else (0, 0))
    fast = (torch.cuda.get_device_properties(0).major if torch.version.cuda else 0) >= 8  # keep this comment
    name = torch.get_device_module(_accel_type or "cuda").get_device_name(0)
    peer = torch.get_device_module(_accel_type or "cuda").can_device_access_peer(0, 1)
    scaler = torch.amp.GradScaler(_accel_type or "cuda", 2.0**16, 2.0, 0.5, 2000, True)
    with torch.autocast(_accel_type or "cuda"):
        pass
    with torch.autocast(_accel_type or "cuda", dtype=torch.bfloat16):
        pass
    s2 = torch.amp.GradScaler(_accel_type or "cuda")
    g = torch.cuda.graphs.CUDAGraph()
    on = x.device.type == (_accel_type or "cuda")
    off = x.device.type != (_accel_type or "cuda")
    gpu = str(x.device).startswith(_accel_type or "cuda")
    if not name.startswith(_accel_type or "cuda") or gpu:
        name = "host"
    same = x.device.type.startswith(_accel_type or "cuda") == gpu
    loader = torch.utils.data.DataLoader(ds, pin_memory=True)
    env = "CUDA_VISIBLE_DEVICES"
    return major, minor, fast, name, peer, scaler, g, on, off, gpu, same, loader


if __name__ == "__main__":
    main()
