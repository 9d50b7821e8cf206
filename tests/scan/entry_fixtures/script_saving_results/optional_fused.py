"""Fused kernels when apex is there; the message below is not a result of a run."""
import torch

try:
    from apex.optimizers import FusedAdam as Adam
except ImportError:
    print("apex is not installed, using torch.optim.Adam")
    Adam = torch.optim.Adam


def save(model, path):
    torch.save(model.state_dict(), path)
