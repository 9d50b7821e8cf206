import torch

from vecpack.core import normalise

if __name__ == "__main__":
    a, b = normalise(torch.randn(4, device="cuda")), normalise(torch.randn(4, device="cuda"))
    print((a * b).sum())
