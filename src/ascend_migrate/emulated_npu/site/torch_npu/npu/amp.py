"""`torch.npu.amp`: autocast and GradScaler with torch_npu's signatures."""
from __future__ import annotations

import warnings

import torch

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(torch.amp.autocast_mode.autocast):
    """torch.autocast("npu", ...) under torch_npu's old-style constructor."""

    def __init__(self, enabled: bool = True, dtype: torch.dtype = torch.float16, cache_enabled: bool = True):
        super().__init__("npu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(torch.amp.GradScaler):
    """torch_npu's GradScaler: no device argument, `dynamic` as the fifth positional."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, dynamic: bool = True, enabled: bool = True):
        if enabled and not torch.npu.is_available():
            warnings.warn("torch_npu.amp.GradScaler is enabled, but NPU is not available. Disabling.")
            enabled = False
        super().__init__("npu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    return torch.amp.custom_fwd(fwd, device_type="npu", cast_inputs=cast_inputs)


def custom_bwd(bwd=None):
    return torch.amp.custom_bwd(bwd, device_type="npu")
