"""Device-type tests that switch CUDA-only paths on (and, without an accelerator, off)."""
import torch


def precision_for(device: torch.device):
    use_fp16 = device.type in ('cuda', 'npu',)
    also = device.type not in ["cuda", "npu", "mps"]
    exact = device.type in ("cuda", "npu")
    other = device.type not in ("cuda", "npu")
    name = str(device)
    prefixed = name.startswith(("cuda", "npu")) or not name.startswith(('cuda', 'npu'))
    return use_fp16, also, exact, other, prefixed


def handled(device):
    # Already lists npu: nothing to change.
    return device.type in ("cuda", "npu")
