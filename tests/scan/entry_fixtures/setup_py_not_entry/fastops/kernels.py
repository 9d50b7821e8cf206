import torch


def scaled_add(x, y, alpha=1.0):
    return x + alpha * y
