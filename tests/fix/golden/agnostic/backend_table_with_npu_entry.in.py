import torch

# A table that already has an npu entry handles npu itself: left as it is.
BACKENDS = {"cuda": "nccl", "cpu": "gloo", "npu": "hccl"}

# Without one, the cuda key names the accelerator (and stays "cuda" without one).
FAST_PATHS = {"cpu": False, "cuda": True}


def uses_fast_path(device: torch.device) -> bool:
    return FAST_PATHS.get(device.type, False)
