"""Synthetic CIFAR-shaped data, so the example runs anywhere without a download."""
import torch
from torch.utils.data import DataLoader, TensorDataset


def make_dataset(n: int = 512, seed: int = 0) -> TensorDataset:
    g = torch.Generator().manual_seed(seed)
    images = torch.randn(n, 3, 32, 32, generator=g)
    labels = torch.randint(0, 10, (n,), generator=g)
    return TensorDataset(images, labels)


def make_loader(batch_size: int, device: str, seed: int = 0) -> DataLoader:
    dataset = make_dataset(seed=seed)
    pin = device.startswith("cuda")
    kwargs = {"pin_memory_device": "cuda"} if pin else {}
    return DataLoader(dataset, batch_size=batch_size, shuffle=True, num_workers=0,
                      pin_memory=pin, generator=torch.Generator().manual_seed(seed), **kwargs)
