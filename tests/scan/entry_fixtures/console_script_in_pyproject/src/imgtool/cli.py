import torch


def train():
    torch.nn.Conv2d(3, 8, 3).cuda()
