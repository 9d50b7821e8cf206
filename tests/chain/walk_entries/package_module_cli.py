"""Validation entry an agent writes for package_module_cli: its own module at the root,
importing the package's model, never the command-line module."""
import torch
from torch import nn

from trainer.model import SeqClassifier, batch


def train_steps(device="cpu", steps=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    model = SeqClassifier(dropout=0.0).to(device)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for _ in range(steps):
        tokens, labels = batch(g)
        loss = nn.functional.cross_entropy(model(tokens.to(device)), labels.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        outputs = model(batch(g)[0].to(device))
    return {"losses": losses, "outputs": outputs, "model": model}
