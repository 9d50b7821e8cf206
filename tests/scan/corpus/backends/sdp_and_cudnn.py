"""Attention-kernel and cuDNN switches under torch.backends, through aliases and partial."""
import contextlib  # expect: none
import functools  # expect: none
from functools import partial  # expect: none

import torch  # expect: none
import torch.backends.cudnn as cudnn  # expect: none
import torch.nn.functional as F  # expect: none
from torch.backends import cuda as bcuda  # expect: none
from torch.backends.cuda import sdp_kernel  # expect: none
from torch.backends.cuda import sdp_kernel as kernel_choice  # expect: none
from torch.backends.cuda import enable_flash_sdp, matmul  # expect: none


def configure(deterministic: bool):
    cudnn.benchmark = not deterministic  # expect: PR002
    cudnn.deterministic = deterministic  # expect: PR006
    cudnn.allow_tf32 = True  # expect: PR001
    torch.backends.cudnn.enabled = True  # expect: PR002
    matmul.allow_tf32 = True  # expect: PR001
    bcuda.matmul.allow_fp16_reduced_precision_reduction = False  # expect: PR001
    enable_flash_sdp(False)  # expect: PR004
    bcuda.enable_mem_efficient_sdp(False)  # expect: PR004
    torch.backends.cuda.enable_math_sdp(True)  # expect: PR004
    print("cudnn", cudnn.version())  # expect: PR002
    return cudnn.is_available()  # expect: PR002


def attention(q, k, v, flash: bool):
    with sdp_kernel(enable_flash=flash, enable_math=not flash):  # expect: PR004
        out = F.scaled_dot_product_attention(q, k, v)  # expect: none
    with kernel_choice(enable_mem_efficient=False):  # expect: PR004
        out = out + F.scaled_dot_product_attention(q, k, v)  # expect: none
    ctx = partial(torch.backends.cuda.sdp_kernel, enable_flash=True)  # expect: PR004
    ctx2 = functools.partial(bcuda.sdp_kernel, enable_math=False)  # expect: PR004
    with cudnn.flags(enabled=False):  # expect: PR002
        out = out * 1  # expect: none
    if bcuda.flash_sdp_enabled():  # expect: PR004
        out = out * 1  # expect: none
    return out, ctx, ctx2, contextlib.nullcontext()  # expect: none


def nearby_names_that_are_fine(settings):
    settings.benchmark = True  # expect: none
    deterministic = settings.deterministic  # expect: none
    torch.use_deterministic_algorithms(deterministic)  # expect: none
    print("deterministic:", cudnn.deterministic)  # expect: none
    if torch.backends.cudnn.deterministic:  # expect: none
        torch.backends.cudnn.deterministic = False  # expect: PR006
    kernel = dict(enable_flash=True)  # expect: none
    return kernel  # expect: none


def shadowed(cudnn):
    cudnn.benchmark = True  # expect: none
    return cudnn  # expect: none
