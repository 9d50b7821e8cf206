import argparse

import torch
from torch.utils.data import Dataset


class NoisySines(Dataset):
    def __init__(self, n: int = 256, length: int = 32) -> None:
        t = torch.linspace(0, 6.28, length)
        self.x = torch.sin(t[None, :] * torch.arange(1, n + 1)[:, None] / n) + 0.1 * torch.randn(n, length)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i].cuda()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="print the shape of a few samples")
    parser.add_argument("--count", type=int, default=3)
    args = parser.parse_args()
    ds = NoisySines()
    for i in range(args.count):
        print(ds[i].shape)
