"""Checkpoint paths that name CUDA, as runs often do (the device that wrote them)."""
import os  # expect: none
from pathlib import Path  # expect: none

import torch  # expect: none

RUN_DIR = "runs/a100_cuda12"  # expect: none


def resume(model, tag):
    state = torch.load("checkpoints/cuda_best.pt", map_location="cpu")  # expect: DV008
    extra = torch.load(f"checkpoints/{tag}_cuda.pt")  # expect: DV008
    spare = torch.from_file("cache/cuda_buffer.bin", size=16)  # expect: DV008
    ema = torch.load(os.path.join("checkpoints", "ema.pt"))  # expect: none
    teacher = torch.load("teachers/cuda/teacher.pt", "cpu", weights_only=True)  # expect: DV008
    with open("log.txt") as log:  # expect: none
        last = torch.load(f"checkpoints/{log.readline().strip()}-cuda.pt")  # expect: DV008
    model.load_state_dict(state)
    return extra, spare, ema, teacher, last


def resume_elsewhere(model, tag):
    a = torch.load("checkpoints/best.pt", map_location="cpu")  # expect: none
    b = torch.load(Path("checkpoints/cuda_best.pt"))  # expect: none
    c = torch.load(f=os.path.join(RUN_DIR, "last.pt"))  # expect: none
    d = torch.load("checkpoints/last.pt", "cuda:0")  # expect: DV001
    e = torch.load(path_for(tag))  # expect: none
    return a, b, c, d, e


def path_for(tag):
    return f"checkpoints/{tag}.pt"  # expect: none
