"""Seeding helpers of a training script: the cuDNN switch asks for reproducible runs."""
import random

import numpy as np
import torch
import torch.backends.cudnn as cudnn

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"


def seed_everything(seed: int, deterministic: bool = True) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    cudnn.deterministic = deterministic  # same result on every run
    if _accel_type == "npu" and cudnn.deterministic:
        torch.use_deterministic_algorithms(True, warn_only=True)
    cudnn.benchmark = not deterministic


def strict_mode() -> None:
    torch.backends.cudnn.deterministic = True
    if _accel_type == "npu" and torch.backends.cudnn.deterministic:
        torch.use_deterministic_algorithms(True, warn_only=True)
    if torch.backends.cudnn.deterministic:
        print("cuDNN deterministic:", torch.backends.cudnn.deterministic)


def chained(flag: bool) -> None:
    # Set in one statement with another switch: listed for a person, not rewritten.
    torch.backends.cudnn.deterministic = cudnn.benchmark = flag
