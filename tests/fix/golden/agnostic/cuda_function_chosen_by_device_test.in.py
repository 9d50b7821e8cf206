import time

import torch


def timed(step, device_type):
    # The test picks the CUDA wait on a CUDA device; on NPU the port's test is true too.
    wait = torch.cuda.synchronize if device_type == "cuda" else (lambda: None)
    release = torch.cuda.empty_cache if device_type == "cuda" else None
    start = time.perf_counter()
    step()
    wait()
    if release is not None:
        release()
    return time.perf_counter() - start
