"""Device queries rewritten for any device."""
from __future__ import annotations

import torch  # the framework
from torch.cuda import amp

# Device type chosen at run time: cuda, npu, xpu, ... or cpu.
_device_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"


def main():
    major, minor = (torch.cuda.get_device_capability() if torch.version.cuda else (0, 0))
    fast = (torch.cuda.get_device_properties(0).major if torch.version.cuda else 0) >= 8  # keep this comment
    name = torch.get_device_module(_device_type).get_device_name(0)
    peer = torch.get_device_module(_device_type).can_device_access_peer(0, 1)
    scaler = torch.amp.GradScaler(_device_type, 2.0**16, 2.0, 0.5, 2000, True)
    with torch.autocast(_device_type):
        pass
    with torch.autocast(_device_type, dtype=torch.bfloat16):
        pass
    s2 = torch.amp.GradScaler(_device_type)
    g = torch.cuda.graphs.CUDAGraph()
    on = x.device.type != "cpu"
    off = x.device.type == "cpu"
    gpu = not str(x.device).startswith("cpu")
    if name.startswith('cpu') or gpu:
        name = "host"
    same = (not x.device.type.startswith("cpu")) == gpu
    loader = torch.utils.data.DataLoader(ds, pin_memory=True)
    env = "CUDA_VISIBLE_DEVICES"
    return major, minor, fast, name, peer, scaler, g, on, off, gpu, same, loader


if __name__ == "__main__":
    main()
