import torch

torch.save(torch.arange(10), "data.pt")
