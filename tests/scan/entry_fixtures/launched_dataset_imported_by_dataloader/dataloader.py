from torch.utils.data import DataLoader

from dataset import NoisySines


def make_loader(batch_size: int = 16, workers: int = 2) -> DataLoader:
    return DataLoader(NoisySines(), batch_size=batch_size, num_workers=workers,
                      multiprocessing_context="spawn" if workers else None)
