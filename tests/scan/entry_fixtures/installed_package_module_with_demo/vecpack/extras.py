"""Optional helpers users import as vecpack.extras; nothing in the project imports them."""
import torch


def cosine(a, b):
    return torch.nn.functional.cosine_similarity(a, b, dim=0)


if __name__ == "__main__":
    print(cosine(torch.ones(3).cuda(), torch.ones(3).cuda()))
