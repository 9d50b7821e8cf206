"""Settings first, framework later."""
SEED = 1234
STEPS = 10

import random

import torch


def run():
    random.seed(SEED)
    return torch.ones(STEPS, device="cuda")
