import torch.nn as nn

from .vocab import Vocab


class Embedder(nn.Module):
    def __init__(self, vocab: Vocab, dim: int = 16):
        super().__init__()
        self.table = nn.Embedding(len(vocab.chars), dim)
