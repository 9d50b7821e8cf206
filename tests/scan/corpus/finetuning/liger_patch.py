"""Patching a model with Liger kernels before training."""
import transformers
from liger_kernel.transformers import apply_liger_kernel_to_llama  # expect: PK002


def patch(model):
    apply_liger_kernel_to_llama()
    return model
