"""A small CUDA-style trainer whose steps dispatch an operator older torch_npu releases run on the
CPU (torch.isin), one no release has an NPU kernel for and the CPU cannot run either (the
efficient-attention kernel, tried and caught as attention code that probes for it does), and a
float64 tensor on the device."""
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
parser.add_argument("--steps", type=int, default=6)
args = parser.parse_args()
dev = args.device

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
stop = torch.tensor([1, 3, 5], device=dev)
data = torch.randn(64, 8)  # prepared on the CPU: not counted
targets = torch.randint(0, 8, (64,))


def fast_attention(q):
    try:
        return torch.ops.aten._scaled_dot_product_efficient_attention(q, q, q, None, False)[0]
    except (RuntimeError, NotImplementedError):
        return q


for step in range(args.steps):
    x = data[step % 8 * 8:(step % 8 + 1) * 8].to(dev)
    ids = targets[step % 8 * 8:(step % 8 + 1) * 8].to(dev)
    keep = torch.isin(ids, stop)
    weight = torch.ones(8, dtype=torch.float64, device=dev).mean().float()
    att = fast_attention(x.view(1, 1, 8, 8))
    loss = model(x).pow(2).mean() + keep.float().mean() * weight + 0 * att.sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f}")
