"""Preference tuning recipe: users start it as `python -m tunekit.recipes.preference --lr 1e-5`."""
import torch

from tunekit.options import OptionParser


def build_parser():
    parser = OptionParser(prog="preference")
    parser.add_argument("--lr", type=float, default=1e-5)
    return parser


def train(lr):
    weights = torch.zeros(4, device="cuda", requires_grad=True)
    loss = (weights - 1).pow(2).sum()
    loss.backward()
    with torch.no_grad():
        weights -= lr * weights.grad


if __name__ == "__main__":
    options = build_parser().parse_args_and_config()
    train(options.lr)
