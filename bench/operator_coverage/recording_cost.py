"""What the operator bookkeeping of the emulated npu costs a training step, in one run.

    python bench/operator_coverage/recording_cost.py [--rounds 5] [--steps 200]

Three sides, alternating per round, single-threaded, on a tiny MLP (about 70 operators a step of
half a millisecond: the case where a per-operator cost shows most): the fallback warnings off
(NPU_STANDIN_FALLBACK_WARNINGS=0, nothing looked at per operator), the default (warnings of the
imitated release on: one lookup per operator), and recording on as well (`ops`). Figure per side:
the median over rounds of each child's median step.

`--ab` measures recording inside one process instead, where other work on the machine and the
memory layout fall on both sides alike: each child (warnings on, as by default) switches
recording and first-dispatch sites on and off in blocks of 10 steps (on, off, off, on, ...)
and times every step as process CPU time (the autograd thread included). Figure: the median
over children of each side's median step, and of the per-child ratio on/off.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r'''
import json, sys, time, torch
import torch_npu
if sys.argv[1] == "record":
    torch_npu._C.record_ops(True)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).to("npu")
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(16, 32).to("npu"), torch.randint(0, 10, (16,)).to("npu")
times = []
for i in range(int(sys.argv[2]) + 20):
    t = time.perf_counter()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    if i >= 20:
        times.append(time.perf_counter() - t)
times.sort()
print(json.dumps({"median_ms": 1000 * times[len(times) // 2]}))
'''

AB_CHILD = r'''
import json, statistics, sys, time, torch
import torch_npu
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).to("npu")
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(16, 32).to("npu"), torch.randint(0, 10, (16,)).to("npu")
times = {True: [], False: []}
state = False
for i in range(int(sys.argv[1]) + 20):
    if i >= 20 and (i - 20) % 10 == 0:
        state = ((i - 20) // 10) % 4 in (0, 3)
        torch_npu._C.record_ops(state)
        torch_npu._C.record_sites(state)
    t = time.process_time()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    if i >= 20:
        times[state].append(time.process_time() - t)
on, off = statistics.median(times[True]), statistics.median(times[False])
print(json.dumps({"on_ms": 1000 * on, "off_ms": 1000 * off}))
'''


def main() -> None:
    from ascend_migrate.emulated_npu import emulated_env, ensure_built

    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--ab", action="store_true", help="recording on and off in blocks inside each child")
    args = parser.parse_args()
    ensure_built()
    if args.ab:
        return ab(args.rounds, args.steps)
    sides = {"warnings off": ("plain", "0"), "default (warnings on)": ("plain", "1"),
             "warnings and recording on": ("record", "1")}
    results = {name: [] for name in sides}
    for _ in range(args.rounds):
        for name, (mode, warn) in sides.items():
            env = emulated_env()
            env.update({"OMP_NUM_THREADS": "1", "NPU_STANDIN_FALLBACK_WARNINGS": warn})
            out = subprocess.run([sys.executable, "-c", CHILD, mode, str(args.steps)], env=env,
                                 capture_output=True, text=True, check=True).stdout
            results[name].append(json.loads(out.strip().splitlines()[-1])["median_ms"])
    base = statistics.median(results["warnings off"])
    for name, values in results.items():
        med = statistics.median(values)
        print(f"{name:28} {med:.3f} ms/step  ({med / base:.3f}x)  rounds: {', '.join(f'{v:.3f}' for v in values)}")


def ab(rounds: int, steps: int) -> None:
    from ascend_migrate.emulated_npu import emulated_env

    on, off, ratio = [], [], []
    for _ in range(rounds):
        env = emulated_env()
        env.update({"OMP_NUM_THREADS": "1"})
        out = subprocess.run([sys.executable, "-c", AB_CHILD, str(steps)], env=env, capture_output=True, text=True,
                             check=True).stdout
        result = json.loads(out.strip().splitlines()[-1])
        on.append(result["on_ms"])
        off.append(result["off_ms"])
        ratio.append(result["on_ms"] / result["off_ms"])
    print(f"recording off  {statistics.median(off):.4f} ms/step (process CPU)  children: "
          + ", ".join(f"{v:.4f}" for v in off))
    print(f"recording on   {statistics.median(on):.4f} ms/step (process CPU)  children: "
          + ", ".join(f"{v:.4f}" for v in on))
    print(f"on/off per child: median {statistics.median(ratio):.3f}x  ({', '.join(f'{r:.3f}' for r in ratio)})")


if __name__ == "__main__":
    main()
