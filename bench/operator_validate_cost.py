"""What recording the operators costs a validation on the emulated npu, beside the previous version.

    git archive 5d142bd^ src | tar -x -C /tmp/am-before      # the version before the operator check
    python bench/operator_validate_cost.py --baseline /tmp/am-before/src [--rounds 5] [--steps 60]

One workload: a CUDA-style trainer of our own (a two-layer transformer language model, 33
distinct operators), ported once with `migrate` (transfer style) and validated with its own command
against a golden captured on the CPU. Three sides, one `validate run --device emulated-npu` each
per round, the order rotating round by round so that other work on the machine falls on all
alike:

  before   the previous version's source (PYTHONPATH=--baseline; its own emulated npu build)
  off      this version with --no-operators (the feature off)
  on       this version as it runs by default (operators recorded, fallbacks of the newest
           release looked up, first dispatch sites kept)

Per side, the median over rounds of: the whole `validate run` (wall seconds), the CPU seconds of
it and every process it started (getrusage of the children), and the median step of the port's
run, timed by the workload itself as process CPU time (it prints it every step; validate relays
the lines). Ratios are against `before`.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TRAINER = '''"""A small language model trained on random tokens, CUDA-style (the device is a flag)."""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda")
parser.add_argument("--steps", type=int, default=1000)
args = parser.parse_args()
torch.set_num_threads(1)
torch.manual_seed(0)


class LM(nn.Module):
    def __init__(self, vocab=128, dim=64, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, 4, 2 * dim, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        mask = nn.Transformer.generate_square_subsequent_mask(tokens.shape[1], device=tokens.device)
        return self.head(self.encoder(self.embed(tokens), mask=mask, is_causal=True))


data = torch.randint(0, 128, (64, 33))
model = LM().to(args.device)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(args.steps):
    batch = data[(step * 8) % 64:(step * 8) % 64 + 8].to(args.device)
    start = time.process_time()
    logits = model(batch[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step-cpu {time.process_time() - start:.6f} loss {loss.item():.5f}", flush=True)
'''

STEP_RE = re.compile(r"step-cpu ([0-9.]+)")


def tool(src: Path, *args: str, cwd: Path, check: bool = True) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run `python -m ascend_migrate ARGS` from the source folder `src`: (process, wall s, CPU s)."""
    env = dict(os.environ, PYTHONPATH=str(src), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ascend_migrate", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if check and proc.returncode != 0:
        raise SystemExit(f"{' '.join(args[:2])} from {src} failed ({proc.returncode}):\n"
                         f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    return proc, wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="src folder of the previous version")
    parser.add_argument("--current", type=Path, default=ROOT / "src", help="src folder of this version")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sides = {"before": (args.baseline, []), "off": (args.current, ["--no-operators"]), "on": (args.current, [])}
    results: dict[str, dict[str, list[float]]] = {s: {"wall": [], "cpu": [], "step": []} for s in sides}
    with tempfile.TemporaryDirectory(prefix="operator-validate-cost-") as tmp:
        work = Path(tmp)
        original = work / "lm"
        original.mkdir()
        (original / "train.py").write_text(TRAINER)
        (work / "env.json").write_text("{}")
        for src in {args.baseline, args.current}:  # each version compiles its own device once
            subprocess.run([sys.executable, "-c", "from ascend_migrate.emulated_npu import ensure_built; ensure_built()"],
                           env=dict(os.environ, PYTHONPATH=str(src)), check=True, timeout=1800)
        tool(args.current, "migrate", str(original), "--output", str(work / "port"), cwd=work)
        tool(args.current, "validate", "capture", "--root", str(original), "--steps", str(args.steps), "-o",
             str(work / "golden.pt"), "--", "python", "train.py", "--device", "cpu", cwd=work)
        names = list(sides)
        for round_no in range(args.rounds):
            order = names[round_no % 3:] + names[:round_no % 3]
            for name in order:
                src, extra = sides[name]
                proc, wall, cpu = tool(src, "validate", "run", str(work / "port"), "--device", "emulated-npu",
                                       "--golden", str(work / "golden.pt"), "--environment", str(work / "env.json"),
                                       "--no-ddp", "--report-dir", str(work / f"report-{name}"), *extra, "--",
                                       "python", "train.py", "--device", "cuda", cwd=work, check=False)
                report = json.loads((work / f"report-{name}" / "validation-report.json").read_text())
                loss = next(i for i in report["items"] if i["id"] == "loss-curve")
                if loss["status"] != "pass":
                    raise SystemExit(f"{name}: loss-curve {loss['status']}: {loss['summary']}\n{proc.stderr[-3000:]}")
                steps = [float(m) for m in STEP_RE.findall(proc.stderr)]
                results[name]["wall"].append(wall)
                results[name]["cpu"].append(cpu)
                results[name]["step"].append(statistics.median(steps) if steps else float("nan"))
                ops = report.get("operators") or {}
                print(f"round {round_no + 1}/{args.rounds} {name}: {wall:.2f} s wall, {cpu:.2f} s CPU, "
                      f"step {results[name]['step'][-1] * 1e3:.3f} ms CPU ({len(steps)} steps); operators "
                      f"{'checked' if ops.get('checked') else ops.get('why', 'absent')}", file=sys.stderr)
    summary = {name: {key: statistics.median(values) for key, values in figures.items()}
               for name, figures in results.items()}
    print(f"median of {args.rounds} rounds, {args.steps} steps, torch {_torch()}, Python {sys.version.split()[0]}")
    print(f"{'side':8} {'validate wall':>14} {'validate CPU':>13} {'step (CPU)':>11}  ratios to before")
    base = summary["before"]
    for name, fig in summary.items():
        print(f"{name:8} {fig['wall']:12.2f} s {fig['cpu']:11.2f} s {fig['step'] * 1e3:8.3f} ms  "
              f"wall {fig['wall'] / base['wall']:.3f}x, CPU {fig['cpu'] / base['cpu']:.3f}x, "
              f"step {fig['step'] / base['step']:.3f}x")
    if args.json:
        args.json.write_text(json.dumps({"rounds": args.rounds, "steps": args.steps, "raw": results,
                                         "median": summary}, indent=1) + "\n")


def _torch() -> str:
    try:
        import torch

        return torch.__version__
    except ImportError:
        return "?"


if __name__ == "__main__":
    main()
