"""Device queries rewritten for any device."""
from __future__ import annotations

import torch  # the framework
from torch.cuda import amp


def main():
    major, minor = torch.cuda.get_device_capability()
    fast = torch.cuda.get_device_properties(0).major >= 8  # keep this comment
    name = torch.cuda.get_device_name(device=0)
    peer = torch.cuda.can_device_access_peer(device=0, peer_device=1)
    scaler = amp.GradScaler(2.0**16, 2.0, 0.5, 2000, True)
    with torch.cuda.amp.autocast():
        pass
    with amp.autocast(dtype=torch.bfloat16):
        pass
    s2 = torch.amp.GradScaler("cuda")
    g = torch.cuda.graphs.CUDAGraph()
    on = x.device.type == "cuda"
    off = x.device.type != "cuda"
    gpu = str(x.device).startswith("cuda")
    if not name.startswith('cuda') or gpu:
        name = "host"
    same = x.device.type.startswith("cuda") == gpu
    loader = torch.utils.data.DataLoader(ds, pin_memory=True, pin_memory_device="cuda")
    env = "CUDA_VISIBLE_DEVICES"
    return major, minor, fast, name, peer, scaler, g, on, off, gpu, same, loader


if __name__ == "__main__":
    main()
