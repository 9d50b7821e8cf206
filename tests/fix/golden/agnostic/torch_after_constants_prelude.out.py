"""Settings first, framework later."""
SEED = 1234
STEPS = 10

import random

import torch

# The host's accelerator (cuda, npu, xpu, ...), or None without one; tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_device_type = _accel_type or "cpu"


def run():
    random.seed(SEED)
    return torch.ones(STEPS, device=_device_type)
