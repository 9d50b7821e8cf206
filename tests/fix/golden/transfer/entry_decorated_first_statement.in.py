@torch_only_when_available
def describe_device():
    return "cuda" if torch.cuda.is_available() else "cpu"


import torch

if __name__ == "__main__":
    print(describe_device(), torch.ones(2).cuda())
