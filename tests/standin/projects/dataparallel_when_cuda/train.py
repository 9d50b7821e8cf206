"""A small classifier trained the way many CIFAR scripts do it: DataParallel whenever the device
is cuda. Used to check what a transfer-style port of that pattern does on an npu host."""
import argparse
import json

import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(torch.flatten(x, 1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--loss-log", default=None)
    args = parser.parse_args()

    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    net = Net()
    net = net.to(device)
    if device == "cuda":
        net = torch.nn.DataParallel(net)
        cudnn.benchmark = True
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)

    losses = []
    for _ in range(args.steps):
        images = torch.randn(16, 3, 8, 8).to(device)
        labels = torch.randint(0, 10, (16,)).to(device)
        loss = F.cross_entropy(net(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    print(f"device={device} last_loss={losses[-1]:.6f}")
    if args.loss_log:
        with open(args.loss_log, "w", encoding="utf-8") as fh:
            json.dump(losses, fh)


if __name__ == "__main__":
    main()
