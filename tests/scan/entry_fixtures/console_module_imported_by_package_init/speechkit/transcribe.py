"""The library function and, next to it, the `speechkit` command that wraps it."""
import argparse

import torch


def transcribe(samples, device="cuda"):
    return torch.as_tensor(samples, device=device).abs().mean()


def command():
    """Entry of the `speechkit` command."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    print(transcribe([0.5, -0.25], args.device))
