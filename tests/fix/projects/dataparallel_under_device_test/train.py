"""Small CIFAR-style trainer: DataParallel is chosen by a device test and by a GPU count."""
import argparse

import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn
import torch.optim as optim


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 32), nn.ReLU(), nn.Linear(32, 10))

    def forward(self, x):
        return self.body(x)


def build(device: str) -> nn.Module:
    net = Net().to(device)
    if device == 'cuda':
        net = torch.nn.DataParallel(net)
        cudnn.benchmark = True
    return net


def build_wide(device: str) -> nn.Module:
    net = Net().to(device)
    if torch.cuda.device_count() > 1:
        net = nn.DataParallel(net)
    return net


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    net = build(device)
    optimizer = optim.SGD(net.parameters(), lr=args.lr, momentum=0.9)
    for step in range(3):
        inputs = torch.randn(4, 3, 8, 8, device=device)
        targets = torch.randint(0, 10, (4,), device=device)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(net(inputs), targets)
        loss.backward()
        optimizer.step()
        if device == 'cuda':
            torch.cuda.synchronize()
            print(step, loss.item(), torch.cuda.max_memory_allocated())


if __name__ == "__main__":
    main()
