"""Train SmallResNet on synthetic CIFAR-shaped data.

Single device:   python train.py --device cuda --steps 20
Several GPUs:    torchrun --nproc_per_node=2 train.py   (NCCL)

`validation_entry` and `train_steps` at the bottom are what `ascend-migrate validate` runs to
compare a port with this original.
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

from data import make_dataset, make_loader
from model import SmallResNet
from utils.device import configure_precision, describe_device, supports_bf16

try:
    from flash_attn import flash_attn_func  # optional fast attention for the ViT variant
except ImportError:
    flash_attn_func = None


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Train SmallResNet on synthetic data.")
    parser.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--loss-log", default=None, help="write the loss of every step as JSON")
    return parser.parse_args(argv)


def setup_distributed(args):
    """Initialise torch.distributed when launched by torchrun; return (rank, world size)."""
    if "RANK" not in os.environ:
        return 0, 1
    local_rank = int(os.environ["LOCAL_RANK"])
    if args.device.startswith("cuda"):
        dist.init_process_group(backend="nccl")
        torch.cuda.set_device(local_rank)
        args.device = f"cuda:{local_rank}"
    else:
        dist.init_process_group(backend="gloo")
    return dist.get_rank(), dist.get_world_size()


def train(args):
    """Run args.steps steps; return the per-step losses and the trained model."""
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    rank, world = setup_distributed(args)
    use_amp = args.device.startswith("cuda")
    if use_amp:
        configure_precision()
    device = torch.device(args.device)

    model = SmallResNet().to(device)
    if world > 1:
        ids = [device.index] if device.type == "cuda" else None
        model = nn.parallel.DistributedDataParallel(model, device_ids=ids)
    elif torch.cuda.device_count() > 1:
        model = nn.DataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
    amp_dtype = torch.bfloat16 if supports_bf16() else torch.float16

    losses = []
    model.train()
    loader = make_loader(args.batch_size, args.device, seed=args.seed)
    start = time.perf_counter()
    step = 0
    while step < args.steps:
        for images, labels in loader:
            if step >= args.steps:
                break
            if use_amp:
                images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
            else:
                images, labels = images.to(device), labels.to(device)
            with torch.cuda.amp.autocast(enabled=use_amp, dtype=amp_dtype):
                loss = F.cross_entropy(model(images), labels)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item())
            step += 1
    if use_amp:
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    if rank == 0:
        print(f"device={describe_device(args.device)} steps={step} time={elapsed:.2f}s last_loss={losses[-1]:.6f}")
        if args.loss_log:
            with open(args.loss_log, "w", encoding="utf-8") as fh:
                json.dump({"losses": losses, "world_size": world}, fh)
    if world > 1:
        dist.destroy_process_group()
    return losses, model


def validation_entry(device="cpu"):
    """The model and one batch, built on the CPU so that one seed gives the same numbers on every
    device (the validator moves both to `device` and runs the forward pass in eval mode)."""
    images, _ = make_dataset(n=8).tensors
    return SmallResNet(), (images,)


def train_steps(device="cpu", steps=5, seed=0):
    """A short training run: the per-step losses, the trained model's logits on a fixed batch, and
    the model itself for the two-process smoke run (under torchrun this joins the process group
    like a real launch)."""
    losses, model = train(parse_args(["--device", device, "--steps", str(steps), "--seed", str(seed)]))
    images, _ = make_dataset(n=8, seed=seed + 1).tensors
    model.eval()
    with torch.no_grad():
        logits = model(images.to(device))
    half = "bf16" if supports_bf16() else "fp16"
    return {"losses": losses, "outputs": {"logits": logits}, "model": model,
            "dtype": "fp32" if device.startswith("cpu") else half}


if __name__ == "__main__":
    train(parse_args())
