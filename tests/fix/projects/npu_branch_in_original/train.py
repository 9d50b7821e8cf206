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


def batch_to(batch: torch.Tensor, device: str) -> torch.Tensor:
    if device == "npu":
        return batch.to("npu")
    else:
        return batch.to("cuda:0")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="npu")
    args = parser.parse_args()
    model = place(nn.Linear(4, 2), args.device)
    print(model(batch_to(torch.zeros(1, 4), args.device)).sum().item())


if __name__ == "__main__":
    main()
