"""Device-type tests that switch CUDA-only paths on (and, without an accelerator, off)."""
import torch


def precision_for(device: torch.device):
    use_fp16 = device.type in ('cuda',)
    also = device.type not in ["cuda", "mps"]
    exact = device.type == "cuda"
    other = "cuda" != device.type
    name = str(device)
    prefixed = name.startswith("cuda") or not name.startswith('cuda')
    return use_fp16, also, exact, other, prefixed


def handled(device):
    # Already lists npu: nothing to change.
    return device.type in ("cuda", "npu")
