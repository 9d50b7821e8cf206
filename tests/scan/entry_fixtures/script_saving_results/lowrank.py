"""Low-rank adapter arithmetic, imported by the merge script."""
import torch


def merged_weight(weight, pair):
    if pair is None:
        return weight
    down, up = pair
    return weight + torch.mm(up, down)
