"""Device helpers: what the GPU can do and how much memory it has."""
import logging

import torch
from torch import cuda

log = logging.getLogger(__name__)


def supports_bf16() -> bool:
    """bf16 autocast needs Ampere (sm80) or newer."""
    if not cuda.is_available():
        return False
    major, _ = torch.cuda.get_device_capability()
    return major >= 8


def use_fused_kernels(device_index: int = 0) -> bool:
    return torch.cuda.get_device_properties(device_index).major >= 8


def describe_device(device: str) -> str:
    if not device.startswith("cuda"):
        return "cpu"
    name = torch.cuda.get_device_name(device=0)
    free, total = torch.cuda.mem_get_info()
    log.info("running on cuda device %s", name)
    return f"{name} ({free / 2**30:.1f} of {total / 2**30:.1f} GiB free)"


def configure_precision() -> None:
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True
