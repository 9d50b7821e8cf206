"""Resuming from checkpoints whose file names say which device produced them."""
import torch

BASELINE = "checkpoints/resnet18_cuda_fp16.pt"


def resume(model, optimizer, run_name: str):
    state = torch.load("checkpoints/cuda_warmup.pt", map_location="cpu")
    model.load_state_dict(state["model"])
    history = torch.load(f"runs/{run_name}/metrics_cuda.pt", "cpu")
    # A device string is what the patch is for: left as it is.
    optimizer.load_state_dict(torch.load("checkpoints/optimizer.pt", map_location="cuda:0"))
    # A path held in a name is rewritten too, but only a literal can be seen here.
    baseline = torch.load(BASELINE)
    return history, baseline
