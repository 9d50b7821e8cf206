import time

import torch


def timed(fn, *args):
    torch.cuda.synchronize()
    start = time.perf_counter()
    out = fn(*args)
    torch.cuda.synchronize(0)
    used = torch.cuda.max_memory_allocated() / 2**20
    stats = torch.cuda.memory_stats()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.empty_cache()
    print(f"{time.perf_counter() - start:.3f}s {used:.1f} MiB {len(stats)}")
    return out, torch.cuda.memory_allocated()
