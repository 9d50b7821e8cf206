import torch


def on_gpu(device):
    return str(device).startswith(("cuda:", "npu:"))
