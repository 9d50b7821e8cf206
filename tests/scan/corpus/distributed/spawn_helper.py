"""Starts one training process per local GPU with torch.multiprocessing; no Ray anywhere, so a
`num_gpus=` or `placement_group=` argument here is this module's own parameter."""
import torch.multiprocessing as mp  # expect: none


def spawn(fn, num_gpus):
    mp.spawn(fn, nprocs=num_gpus)  # expect: none


def launch(fn, num_gpus, placement_group=None):
    spawn(fn, num_gpus=num_gpus)  # expect: none
    return run_on(fn, placement_group=placement_group, num_gpus=num_gpus)  # expect: none


def run_on(fn, placement_group, num_gpus):
    return fn, placement_group, num_gpus
