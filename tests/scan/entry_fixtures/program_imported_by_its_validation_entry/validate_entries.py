"""Validation entry of the port: the model factory of the training script, on seeded inputs."""
import torch

from multigpu_train import load_train_objs


def validation_entry(device="cpu", seed=0):
    model, _ = load_train_objs()
    return model, (torch.randn(4, 16, generator=torch.Generator().manual_seed(seed)),)
