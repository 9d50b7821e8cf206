"""Cost per training step of the validate harness (ascend_migrate.validate.harness).

One workload script trains three small models on CPU, single thread: a tiny MLP (where a fixed
per-step cost shows most), a small CNN and a small transformer. It times every step itself
(forward, backward and optimizer step) as the CPU time of its thread (time.thread_time: the
harness's cost is CPU work in that thread, and CPU time is far less disturbed than wall time by
other work on a shared machine) and as wall time, and prints the medians per model.
The same script runs in three configurations, interleaved round by round (the order rotating)
so that a machine busy with other work affects all three alike:

  plain     no harness
  harness   harness_env(steps=0): the patches, no stop
  sites     the same plus edit-site probes on the lines run every step (re-launch included)
  ab        harness on, the workload taking the patches out and putting them back in blocks
            of 10 steps (on, off, off, on, ...): the same process and memory layout for both

Reported: the median over runs of each run's median step time, and the differences; then the
cost of one probe call measured directly.

    python bench/harness_cost.py [--runs 5] [--steps 80] [--json results.json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from ascend_migrate.validate.harness import harness_env, read_records  # noqa: E402

WORKLOAD = '''"""Three small models, a fixed number of steps each; prints median step times."""
import json
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
WARMUP, STEPS = 10, int(sys.argv[1])


class TinyMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))

    def forward(self, x):
        return self.net(x)                                              # SITE


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.c2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)                         # SITE
        x = F.max_pool2d(F.relu(self.c2(x)), 2)                         # SITE
        return self.fc(x.flatten(1))                                    # SITE


class SmallTransformer(nn.Module):
    def __init__(self, vocab=256, dim=128, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, 4, 4 * dim, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens)))              # SITE


def batches(name, g):
    if name == "tiny_mlp":
        return torch.randn(32, 16, generator=g), torch.randint(0, 4, (32,), generator=g)
    if name == "small_cnn":
        return torch.randn(32, 3, 32, 32, generator=g), torch.randint(0, 10, (32,), generator=g)
    tokens = torch.randint(0, 256, (8, 64), generator=g)
    return tokens, tokens.roll(-1, 1)


def switch(on, saved=[]):
    """Same-process A/B: take the harness's patches out (off) or put them back (on)."""
    import torch.optim.optimizer as opt
    if not saved:
        saved.extend([torch.Tensor.backward, torch.autograd.backward,
                      dict(opt._global_optimizer_pre_hooks),
                      dict(opt._global_optimizer_post_hooks)])
    backward, autograd_backward, pre, post = saved
    torch.Tensor.backward = backward if on else getattr(backward, "__wrapped__", backward)
    torch.autograd.backward = (autograd_backward if on
                               else getattr(autograd_backward, "__wrapped__", autograd_backward))
    opt._global_optimizer_pre_hooks.clear()
    opt._global_optimizer_post_hooks.clear()
    if on:
        opt._global_optimizer_pre_hooks.update(pre)
        opt._global_optimizer_post_hooks.update(post)


def train(name, model, ab):
    g = torch.Generator().manual_seed(0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = [batches(name, g) for _ in range(8)]
    cpu, wall, state = {True: [], False: []}, {True: [], False: []}, True
    for step in range(WARMUP + STEPS):
        if ab and step % 10 == 0:  # blocks of 10 steps: on, off, off, on, ... (drift cancels)
            state = (step // 10) % 4 in (0, 3)
            switch(state)
        x, y = data[step % len(data)]
        start, start_wall = time.thread_time(), time.perf_counter()
        out = model(x)                                                  # SITE
        loss = F.cross_entropy(out.flatten(0, -2), y.flatten())       # SITE
        optimizer.zero_grad()                                           # SITE
        loss.backward()                                                 # SITE
        optimizer.step()                                                # SITE
        if step >= WARMUP:
            cpu[state].append(time.thread_time() - start)
            wall[state].append(time.perf_counter() - start_wall)
    if ab:
        return statistics.median(cpu[True]), statistics.median(cpu[False])
    return statistics.median(cpu[True]), statistics.median(wall[True])


torch.manual_seed(0)
AB = "--ab" in sys.argv
result = {}
for name, cls in (("tiny_mlp", TinyMLP), ("small_cnn", SmallCNN),
                  ("small_transformer", SmallTransformer)):
    result[name], result[name + (":off" if AB else ":wall")] = train(name, cls(), AB)
print(json.dumps(result))
'''


def _site_lines(path: Path) -> list[int]:
    return [i for i, line in enumerate(path.read_text().splitlines(), 1) if line.endswith("# SITE")]


def _run(script: Path, steps: int, config: str, out: Path) -> dict:
    base = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    if config == "plain":
        env = base
    else:
        sites = {str(script): _site_lines(script)} if config == "sites" else None
        env = harness_env(out, steps=0, seed=0, threads=1, sites=sites, base=base)
    cmd = [sys.executable, str(script), str(steps)] + (["--ab"] if config == "ab" else [])
    proc = subprocess.run(cmd, cwd=script.parent, env=env, capture_output=True, text=True,
                          timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"{config} run failed:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if config != "plain":
        records = read_records(out)
        assert len(records) == 1, records.problems
        result["_steps"] = records[0]["steps"]
        if config == "sites":
            statuses = records[0]["sites"][str(script)].values()
            assert set(statuses) == {"ran"}, records[0]["sites"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=80, help="timed steps per model")
    parser.add_argument("--json", type=Path, help="write the raw and summary figures here")
    args = parser.parse_args()
    configs = ("plain", "harness", "sites", "ab")
    raw: dict[str, list[dict]] = {c: [] for c in configs}
    with tempfile.TemporaryDirectory(prefix="harness-cost-") as tmp:
        script = Path(tmp) / "workload.py"
        script.write_text(WORKLOAD)
        for round_no in range(args.runs):
            turn = round_no % len(configs)
            order = configs[turn:] + configs[:turn]  # no configuration always runs first
            for config in order:
                out = Path(tmp) / f"{config}-{round_no}"
                raw[config].append(_run(script, args.steps, config, out))
                print(f"round {round_no + 1}/{args.runs} {config}: "
                      + ", ".join(f"{k} {v * 1e3:.3f} ms" for k, v in raw[config][-1].items()
                                  if not k.startswith("_") and ":" not in k), file=sys.stderr)
    models = [k for k in raw["plain"][0] if not k.startswith("_") and ":" not in k]

    def median(config, key):
        return statistics.median(r[key] for r in raw[config])

    print(f"median of {args.runs} runs, {args.steps} timed steps per model, single thread "
          f"(torch {_torch_version()}, Python {sys.version.split()[0]})")
    summary = {}
    for title, suffix in (("thread CPU time", ""), ("wall time", ":wall")):
        print(f"\nSeparate processes, {title} per step")
        print("| model | plain ms | harness ms | + sites ms | harness - plain | sites - plain |")
        print("|---|---|---|---|---|---|")
        for m in models:
            s = {c: median(c, m + suffix) for c in ("plain", "harness", "sites")}
            summary[m + suffix] = s
            print(f"| {m} | {s['plain'] * 1e3:.3f} | {s['harness'] * 1e3:.3f} "
                  f"| {s['sites'] * 1e3:.3f} | {(s['harness'] - s['plain']) * 1e6:+.1f} us "
                  f"| {(s['sites'] - s['plain']) * 1e6:+.1f} us |")
    print("\nSame process, patches on and off in blocks of 10 steps (ABBA), thread CPU time")
    print("| model | off ms | on ms | on - off |")
    print("|---|---|---|---|")
    for m in models:
        on, off = median("ab", m), median("ab", m + ":off")
        summary[m + ":ab"] = {"on": on, "off": off}
        print(f"| {m} | {off * 1e3:.3f} | {on * 1e3:.3f} | {(on - off) * 1e6:+.1f} us |")
    probe = _probe_call_cost()
    summary["probe_call"] = probe
    print(f"\nOne edit-site probe call (a builtin set.add): {probe * 1e9:.0f} ns")
    if args.json:
        args.json.write_text(json.dumps({"runs": args.runs, "steps": args.steps, "raw": raw,
                                         "summary": summary}, indent=1))


def _probe_call_cost() -> float:
    import builtins
    import timeit

    from ascend_migrate.validate.harness.inject._ascend_migrate_harness import PROBE_NAME
    seen: set = set()
    setattr(builtins, PROBE_NAME, seen.add)
    try:  # the name is looked up as a global, then found among the builtins, as in probed code
        number = 1_000_000
        return min(timeit.repeat(f"{PROBE_NAME}(7)", number=number, repeat=5)) / number
    finally:
        delattr(builtins, PROBE_NAME)


def _torch_version() -> str:
    proc = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                          capture_output=True, text=True, timeout=300)
    return proc.stdout.strip() or "?"


if __name__ == "__main__":
    main()
