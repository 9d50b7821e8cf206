"""Fits a small regressor; everything runs at import time, there is no main block."""
import argparse

import torch

from layers import TinyMLP

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=10)
opts = parser.parse_args()

model = TinyMLP().to("cuda")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(opts.steps):
    x = torch.randn(8, 4, device="cuda")
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
