import torch

from vecpack import normalise

if __name__ == "__main__":
    print(normalise(torch.ones(2, device="cuda")))
