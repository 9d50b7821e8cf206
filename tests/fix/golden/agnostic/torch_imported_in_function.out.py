"""The framework is imported lazily, inside the function that needs it."""
import logging

import torch

# The host's accelerator when it is cuda or npu, else None (the CPU, where the original ran); tensors go to _device_type.
_accel_type = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else None
_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None
_device_type = _accel_type or "cpu"

log = logging.getLogger(__name__)


def build(size):
    import torch

    log.info("building")
    return torch.randn(size, device=_device_type)
