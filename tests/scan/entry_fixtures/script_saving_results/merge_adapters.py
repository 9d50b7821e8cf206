"""Fold a low-rank adapter into its base weights and write the merged checkpoint."""
import json
import os

import torch

from lowrank import merged_weight

base = torch.load("base.pt", map_location="cpu")
adapter = torch.load("adapter.pt", map_location="cpu")

merged = {}
for name, weight in base.items():
    merged[name] = merged_weight(weight, adapter.get(name))

os.makedirs("out", exist_ok=True)
torch.save(merged, "out/merged.pt")
with open("out/meta.json", "w") as handle:
    json.dump({"tensors": len(merged)}, handle)
