"""A memory-layout workaround applied only on CUDA, next to tests that do change behaviour."""
import torch


def attention_inputs(query, key):
    if query.device.type == "cuda":  # expect: none
        query = query.contiguous()
        key = key.contiguous()
    value = key.contiguous() if key.device.type == "cuda" else key  # expect: none
    return query, key, value


def half_on_cuda(x):
    if x.device.type == "cuda":  # expect: DV004
        x = x.half()
    return x


def layout_or_copy(x):
    if x.device.type == "cuda":  # expect: DV004
        x = x.contiguous()
    else:
        x = x.clone()
    return x
