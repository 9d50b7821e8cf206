"""Validation entry an agent writes for script_trains_at_import, as the skill says: its own
module, importing only the model (main.py trains at import, utils.py runs `stty` at import)."""
import torch
from torch import nn

from models import SmallNet


def _batch(seed, n=8):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 3, 32, 32, generator=g), torch.randint(0, 10, (n,), generator=g)


def train_steps(device="cpu", steps=5, seed=0):
    model = SmallNet(dropout=0.0).to(device)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    losses = []
    for step in range(steps):
        images, labels = _batch(seed + step)
        loss = nn.functional.cross_entropy(model(images.to(device)), labels.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    probe, _ = _batch(seed + 1000)
    model.eval()
    with torch.no_grad():
        outputs = model(probe.to(device))
    return {"losses": losses, "outputs": outputs, "model": model}
