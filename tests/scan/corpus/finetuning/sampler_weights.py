"""Class-balanced loading: float64 weights that only a WeightedRandomSampler reads stay on the CPU."""
import torch
from torch.utils.data import DataLoader, WeightedRandomSampler


def balanced_loader(dataset, class_weights):
    weights = torch.DoubleTensor(class_weights)  # expect: none
    sampler = WeightedRandomSampler(weights, len(weights))  # expect: none
    return DataLoader(dataset, batch_size=8, sampler=sampler)


def keyword_sampler(counts):
    return WeightedRandomSampler(weights=torch.tensor(counts, dtype=torch.double), num_samples=16)  # expect: none


def weights_on_the_device(dataset, class_weights):
    weights = torch.DoubleTensor(class_weights)  # expect: PR003
    scale = weights.to("npu")  # expect: none
    return WeightedRandomSampler(weights, len(weights)), scale


def float64_logits(logits):
    return logits.to(torch.float64)  # expect: PR003
