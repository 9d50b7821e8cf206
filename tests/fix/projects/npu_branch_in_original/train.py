"""A trainer that someone already ported by hand: it has its own npu branch."""
import argparse

import torch
import torch.nn as nn


def place(model: nn.Module, device: str) -> nn.Module:
    if device == "cuda":
        model = model.cuda()
        torch.cuda.synchronize()
    elif device == "npu":
        model = model.to("npu")
    return model


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="npu")
    args = parser.parse_args()
    model = place(nn.Linear(4, 2), args.device)
    print(model(torch.zeros(1, 4, device=args.device)).sum().item())


if __name__ == "__main__":
    main()
