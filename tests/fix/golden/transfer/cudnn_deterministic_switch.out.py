"""Seeding helpers of a training script: the cuDNN switch asks for reproducible runs."""
import random

import numpy as np
import torch
import torch.backends.cudnn as cudnn


def seed_everything(seed: int, deterministic: bool = True) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    cudnn.deterministic = deterministic  # same result on every run
    if hasattr(torch, "npu") and cudnn.deterministic:
        torch.use_deterministic_algorithms(True, warn_only=True)
    cudnn.benchmark = not deterministic


def strict_mode() -> None:
    torch.backends.cudnn.deterministic = True
    if hasattr(torch, "npu") and torch.backends.cudnn.deterministic:
        torch.use_deterministic_algorithms(True, warn_only=True)
    if torch.backends.cudnn.deterministic:
        print("cuDNN deterministic:", torch.backends.cudnn.deterministic)


def chained(flag: bool) -> None:
    # Set in one statement with another switch: listed for a person, not rewritten.
    torch.backends.cudnn.deterministic = cudnn.benchmark = flag
