"""A character vocabulary; the main block below is only a demonstration."""
import torch


class Vocab:
    def __init__(self, text):
        self.chars = sorted(set(text))

    def encode(self, text):
        return torch.tensor([self.chars.index(c) for c in text])


if __name__ == "__main__":
    print(Vocab("hello").encode("hell"))
