"""Compiles the optional extension before packaging."""
import torch
from torch.utils.cpp_extension import load

if __name__ == "__main__":
    load("fastops_ext", ["csrc/ops.cpp"])
