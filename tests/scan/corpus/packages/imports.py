"""Imports of packages with CUDA-only code, and of packages that are fine."""
import deepspeed  # expect: none
import numpy as np  # expect: none
import flash_attn  # expect: PK002
from xformers import ops as xops  # expect: PK002
import apex  # expect: PK002
from deepspeed.accelerator import get_accelerator  # expect: none
from deepspeed.ops.adam import FusedAdam  # expect: none

try:
    import triton  # expect: PK002
except ImportError:
    triton = None  # expect: none


def make(params):
    engine = deepspeed.initialize(model=None, model_parameters=params)  # expect: none
    device = get_accelerator().device_name()  # expect: none
    opt = FusedAdam(params)  # expect: none
    return engine, device, opt, np, flash_attn, xops, apex
