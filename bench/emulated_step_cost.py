"""A training step on the emulated npu against the same step on the CPU, in one run.

    python bench/emulated_step_cost.py [--rounds 5] [--steps 30] [--json bench/emulated_step_cost.json]

Each round starts one child per side, alternating, single-threaded: the CPU, the emulated npu
(through `ascend_migrate.emulated_npu.emulated_env`), and the emulated npu with its zero-copy route
switched off (every op copies its operands to the CPU and its results back, as
at::native::cpu_fallback does: the device before the zero-copy route, kept as the baseline). A
child builds the model and data from a fixed seed, runs warm-up steps, then times `--steps`
optimizer steps with `time.perf_counter`. The figure per side is the median over rounds of each
child's median step.

`mlp` uses AdamW's default implementation, which differs by device: the single-tensor loop on the
CPU, the foreach kernels on an accelerator (npu included, as on a real one). `mlp-same-optimizer`
runs the single-tensor loop on both sides, so that its ratio is the device's own cost.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r'''
import json, sys, time, torch
device = sys.argv[1]; model_name = sys.argv[2]; steps = int(sys.argv[3]); route = sys.argv[4]
if device == "npu":
    import torch_npu  # noqa: F401  (the emulated device)
    torch_npu._C.set_zero_copy(route == "zero-copy")
torch.manual_seed(0)
if model_name == "cnn":
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(32, 32, 3, padding=1), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(4), torch.nn.Flatten(), torch.nn.Linear(512, 10))
    x, y = torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))
    loss_fn = torch.nn.functional.cross_entropy
elif model_name == "transformer":
    layer = torch.nn.TransformerEncoderLayer(128, 4, 256, dropout=0.1, batch_first=True)
    model = torch.nn.Sequential(torch.nn.TransformerEncoder(layer, 2), torch.nn.Flatten(), torch.nn.Linear(32 * 128, 10))
    x, y = torch.randn(8, 32, 128), torch.randint(0, 10, (8,))
    loss_fn = torch.nn.functional.cross_entropy
else:  # mlp, mlp-same-optimizer
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
    loss_fn = torch.nn.functional.cross_entropy
model = model.to(device); x, y = x.to(device), y.to(device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False if model_name == "mlp-same-optimizer" else None)
times = []
for i in range(steps + 5):
    t0 = time.perf_counter()
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    float(loss)  # the value leaves the device, as a training loop's logging does
    if i >= 5:
        times.append(time.perf_counter() - t0)
times.sort()
print(json.dumps({"median_s": times[len(times) // 2], "loss": float(loss)}))
'''


def run_side(device: str, model: str, steps: int, env: dict[str, str], route: str = "zero-copy") -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, device, model, str(steps), route], env=env,
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"{device} {model} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--models", default="mlp,mlp-same-optimizer,cnn,transformer")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from ascend_migrate.emulated_npu import emulated_env, ensure_built

    ensure_built()
    base = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    cpu_env = dict(base)
    npu_env = emulated_env(base)
    npu_env["NPU_STANDIN_AUTOCAST"] = "0"
    rows = []
    for model in args.models.split(","):
        cpu, npu, copying, same = [], [], [], True
        for _ in range(args.rounds):
            c = run_side("cpu", model, args.steps, cpu_env)
            n = run_side("npu", model, args.steps, npu_env)
            k = run_side("npu", model, args.steps, npu_env, route="copying")
            cpu.append(c["median_s"])
            npu.append(n["median_s"])
            copying.append(k["median_s"])
            same = same and c["loss"] == n["loss"] == k["loss"]
        c_med, n_med, k_med = statistics.median(cpu), statistics.median(npu), statistics.median(copying)
        rows.append({"model": model, "cpu_ms": round(c_med * 1e3, 3), "emulated_npu_ms": round(n_med * 1e3, 3),
                     "ratio": round(n_med / c_med, 3), "copying_route_ms": round(k_med * 1e3, 3),
                     "copying_route_ratio": round(k_med / c_med, 3), "same_final_loss": same,
                     "rounds": args.rounds, "steps": args.steps})
    print("| model | CPU ms/step | emulated npu ms/step | ratio | copying route ms/step | ratio | same final loss |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['model']} | {r['cpu_ms']} | {r['emulated_npu_ms']} | {r['ratio']} | {r['copying_route_ms']} "
              f"| {r['copying_route_ratio']} | {r['same_final_loss']} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
