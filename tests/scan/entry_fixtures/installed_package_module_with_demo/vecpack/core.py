import torch


def normalise(x):
    return x / x.norm()
