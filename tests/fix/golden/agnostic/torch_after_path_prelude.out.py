"""A script that extends sys.path before importing the framework."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
try:
    import torch
except ImportError:  # pragma: no cover
    raise SystemExit("torch is required")
import numpy as np

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"

DEVICE = torch.device(_device_type)


def main():
    x = torch.zeros(2).to(DEVICE)
    return np.asarray(x.cpu())
