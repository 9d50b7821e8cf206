#!/usr/bin/env python3
"""Scan throughput: `ascend-migrate scan` side by side with ripgrep on the same tree.

Builds (or reuses) a deterministic synthetic PyTorch project of N lines of Python, then
times, in one run and interleaved round by round:

  rg-seed      ripgrep, one `rg -n REGEX .` per search of the migration guide (10 runs)
  rg-combined  ripgrep, the same 10 regexes as one alternation (1 run)
  scan-cold    our scanner, no cache, one worker per core
  scan-warm    our scanner, cache index populated beforehand, nothing changed
  scan-1-file  our scanner, cache populated, one Python file edited just before the run
  migrate      `python -m ascend_migrate migrate TREE` (dry run: plan, verify, diff), cache populated
  scan-cold-j1 our scanner, no cache, one worker (generated trees only)
  cli-cold     (with --cli) `python -m ascend_migrate scan --format json -o FILE --no-cache`
  base-*       (with --baseline-src DIR) cold, warm, one-file and migrate rows for another version
               of the package, interleaved with ours in every round, each with its own cache

The scanner and migrate rows also report CPU seconds (the process and every worker it
waited for, from getrusage) and peak RSS. A tree given with --tree is copied to a
temporary folder first, so the one-file edit never touches the original.

Every measurement is a fresh process, timed from outside (wall clock: interpreter start,
imports, knowledge base, discovery, parsing, process pool), so ripgrep and the scanner pay
the same kind of costs. The scanner rows also report the time spent inside `scan()` as the
child measured it. The median of --repeat rounds is reported. Files are read once before
timing so every row runs with a warm OS page cache.

    python bench/bench_scan.py                       # 200k lines, 5 rounds
    python bench/bench_scan.py --lines 1000000 --repeat 3 --json results.json
    python bench/bench_scan.py --tree ~/src/some-project --cli
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Optional

HERE = Path(__file__).resolve().parent
DEFAULT_CACHE = HERE / ".cache"
GENERATOR_VERSION = 1
MIN_LINES = 100

# The searches of the migration guide, one `rg -n` each. The guide writes the CUDA-graph
# search as `cuda\.CUDAGraph\|torch\.cuda\.graph` (grep syntax); in ripgrep's syntax `\|`
# is a literal pipe, so the intended alternation is used here.
SEED_PATTERNS = (
    r"torch\.cuda\.get_device_capability",
    r"torch\.cuda\.get_device_properties.*\.major",
    r"torch\.cuda\.amp",
    r"@torch\.cuda\.amp\.autocast",
    r"torch\.cuda\.mem_get_info",
    r"cuda\.CUDAGraph|torch\.cuda\.graph",
    r"DataParallel\b",
    r"DistributedDataParallel",
    r"nccl",
    r"init_process_group",
)
COMBINED_PATTERN = "|".join(f"(?:{p})" for p in SEED_PATTERNS)


# =========================================================================== the tree
@dataclass
class TreeStats:
    root: str
    files: int
    python_files: int
    python_lines: int
    total_lines: int
    bytes: int
    digest: str  # sha256 over (path, content) of every file, sorted by path


WORDS = ("alpha", "beta", "block", "cache", "channel", "decoder", "embed", "encoder", "feature", "gate",
         "graph", "head", "hidden", "image", "kernel", "layer", "mask", "memory", "norm", "patch", "pool",
         "proj", "query", "residual", "sample", "scale", "score", "seq", "state", "step", "token", "value",
         "vision", "weight", "window", "batch", "buffer", "context", "frame", "label", "metric", "offset")
LAYERS = ("nn.Linear({a}, {b})", "nn.Conv2d({a}, {b}, kernel_size=3, padding=1)", "nn.LayerNorm({a})",
          "nn.Dropout(p=0.{d})", "nn.GELU()", "nn.Embedding({b}, {a})", "nn.BatchNorm1d({a})", "nn.SiLU()")


class _Gen:
    """Module text generators; every choice comes from one seeded Random."""

    def __init__(self, rng: random.Random) -> None:
        self.r = rng
        self.names: set[str] = set()

    # ----------------------------------------------------------------- small pieces
    def word(self) -> str:
        return self.r.choice(WORDS)

    def ident(self, parts: int = 2) -> str:
        return "_".join(self.word() for _ in range(parts))

    def cls(self) -> str:
        return "".join(w.capitalize() for w in (self.word(), self.word(), self.r.choice(("Block", "Net", "Layer", "Module", "Head"))))

    def unique(self, make: Callable[[], str]) -> str:
        for _ in range(50):
            name = make()
            if name not in self.names:
                self.names.add(name)
                return name
        name = f"{make()}_{len(self.names)}"
        self.names.add(name)
        return name

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def docstring(self, indent: str, lines: int) -> list[str]:
        body = [f"{indent}{self.word().capitalize()} the {self.word()} {self.word()} of each {self.word()}."]
        for _ in range(lines - 1):
            body.append(f"{indent}{' '.join(self.word() for _ in range(self.r.randint(4, 10)))}.")
        if len(body) == 1:
            return [f'{indent}"""{body[0].strip()}"""']
        return [f'{indent}"""{body[0].strip()}', *body[1:], f'{indent}"""']

    def pure_function(self, indent: str = "") -> list[str]:
        name = self.unique(lambda: self.ident(self.r.randint(2, 3)))
        args = [self.word() for _ in range(self.r.randint(1, 4))]
        args = list(dict.fromkeys(args))
        out = [f"{indent}def {name}({', '.join(args)}, *, strict=False):"]
        out += self.docstring(indent + "    ", self.r.randint(1, 3))
        a = args[0]
        style = self.r.randrange(6)
        i2 = indent + "    "
        if style == 0:
            out += [f"{i2}result = []", f"{i2}for i, item in enumerate({a}):",
                    f"{i2}    if item is None and strict:", f"{i2}        raise ValueError(f\"missing {a} at {{i}}\")",
                    f"{i2}    result.append(item * {self.r.randint(2, 9)} if isinstance(item, int) else item)",
                    f"{i2}return result"]
        elif style == 1:
            empty = self.r.choice(("0.0", 'float("nan")'))
            out += [f"{i2}total = 0.0", f"{i2}count = 0", f"{i2}for value in {a}:",
                    f"{i2}    total += float(value)", f"{i2}    count += 1",
                    f"{i2}return total / count if count else {empty}"]
        elif style == 2:
            out += [f"{i2}with open({a}, encoding=\"utf-8\") as fh:",
                    f"{i2}    rows = [line.rstrip(\"\\n\").split(\",\") for line in fh if line.strip()]",
                    f"{i2}header, *body = rows or [[]]",
                    f"{i2}return [dict(zip(header, row)) for row in body]"]
        elif style == 3:
            out += [f"{i2}try:", f"{i2}    return json.loads({a})", f"{i2}except (TypeError, ValueError) as exc:",
                    f"{i2}    if strict:", f"{i2}        raise", f"{i2}    logger.warning(\"bad {a}: %s\", exc)",
                    f"{i2}    return {{}}"]
        elif style == 4:
            out += [f"{i2}keys = sorted({{k for d in {a} for k in d}})",
                    f"{i2}merged = {{k: [d.get(k) for d in {a}] for k in keys}}",
                    f"{i2}if strict and any(None in v for v in merged.values()):",
                    f"{i2}    raise KeyError(\"incomplete {self.word()} records\")",
                    f"{i2}return merged"]
        else:
            out += [f"{i2}parts = str({a}).split(\"{self.r.choice(('/', '.', ':', '-'))}\")",
                    f"{i2}parts = [p.strip().lower() for p in parts if p]",
                    f"{i2}return \"_\".join(parts)[:{self.r.randint(16, 128)}]"]
        return out + [""]

    def layer(self) -> str:
        a, b = self.r.choice((64, 128, 256, 512, 768, 1024)), self.r.choice((64, 128, 256, 512, 1024, 4096))
        return self.r.choice(LAYERS).format(a=a, b=b, d=self.r.randint(1, 5))

    # ----------------------------------------------------------------- CUDA-using snippets
    def cuda_snippet(self, indent: str) -> list[str]:
        i = indent
        kind = self.r.randrange(16)
        if kind == 0:
            return [f"{i}major, minor = torch.cuda.get_device_capability()", f"{i}use_flash = major >= 8"]
        if kind == 1:
            return [f"{i}if torch.cuda.get_device_properties(0).major >= 8:", f"{i}    torch.backends.cuda.matmul.allow_tf32 = True"]
        if kind == 2:
            return [f"{i}free, total = torch.cuda.mem_get_info()", f"{i}logger.info(\"free memory %.1f GiB\", free / 2**30)"]
        if kind == 3:
            return [f"{i}torch.cuda.synchronize()", f"{i}torch.cuda.empty_cache()"]
        if kind == 4:
            return [f"{i}x = x.cuda(non_blocking=True)"]
        if kind == 5:
            return [f"{i}device = torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")"]
        if kind == 6:
            return [f"{i}with torch.cuda.amp.autocast(enabled=True):", f"{i}    out = model(x)"]
        if kind == 7:
            return [f"{i}graph = torch.cuda.CUDAGraph()", f"{i}with torch.cuda.graph(graph):", f"{i}    static_out = model(static_in)"]
        if kind == 8:
            return [f"{i}torch.backends.cudnn.benchmark = True"]
        if kind == 9:
            return [f"{i}x = x.to(\"cuda:{self.r.randint(0, 7)}\")"]
        if kind == 10:
            return [f"{i}tensor = torch.zeros({self.r.randint(1, 64)}, device=\"cuda\").double()"]
        if kind == 11:
            return [f"{i}stream = torch.cuda.Stream()", f"{i}with torch.cuda.stream(stream):", f"{i}    y = y * 2"]
        if kind == 12:
            return [f"{i}torch.cuda.manual_seed_all(seed)"]
        if kind == 13:
            return [f"{i}name = torch.cuda.get_device_name(device=0)"]
        if kind == 14:
            return [f"{i}torch.cuda.nvtx.range_push(\"{self.word()}\")", f"{i}torch.cuda.nvtx.range_pop()"]
        return [f"{i}peak = torch.cuda.max_memory_allocated() / 2**20", f"{i}torch.cuda.reset_peak_memory_stats()"]

    # ----------------------------------------------------------------- module kinds
    def header(self, doc: str, imports: list[str]) -> list[str]:
        return [f'"""{doc}"""', "from __future__ import annotations", "", *imports, ""]

    def model_module(self, cuda: bool) -> list[str]:
        imports = ["import math", "", "import torch", "import torch.nn as nn", "import torch.nn.functional as F"]
        if cuda and self.chance(0.3):
            imports.append("from torch.cuda.amp import autocast")
        out = self.header(f"{self.word().capitalize()} {self.word()} models.", imports)
        out += ["", ""]
        for _ in range(self.r.randint(1, 4)):
            name = self.unique(self.cls)
            layers = [self.unique(lambda: self.ident()) for _ in range(self.r.randint(2, 7))]
            out += [f"class {name}(nn.Module):"]
            out += self.docstring("    ", self.r.randint(1, 4))
            out += ["", f"    def __init__(self, dim: int = {self.r.choice((256, 512, 768))}, dropout: float = 0.1) -> None:",
                    "        super().__init__()"]
            for layer in layers:
                out.append(f"        self.{layer} = {self.layer()}")
            out += [f"        self.scale = 1.0 / math.sqrt(dim)", ""]
            if cuda and self.chance(0.25):
                out.append("    @torch.cuda.amp.autocast()")
            out += ["    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:"]
            out += ["        residual = x"]
            for layer in layers:
                out.append(f"        x = self.{layer}(x)" if self.chance(0.7) else f"        x = F.gelu(self.{layer}(x)) * self.scale")
            out += ["        if mask is not None:", "            x = x.masked_fill(~mask, 0.0)"]
            if cuda and self.chance(0.3):
                out += self.cuda_snippet("        ")
            out += ["        return x + residual if x.shape == residual.shape else x", ""]
            for _ in range(self.r.randint(0, 3)):
                out += ["    def " + self.unique(lambda: self.ident()) + "(self, x: torch.Tensor) -> torch.Tensor:",
                        f"        return torch.{self.r.choice(('tanh', 'sigmoid', 'relu', 'exp'))}(x).{self.r.choice(('mean', 'sum', 'amax'))}(dim=-1)", ""]
            out.append("")
        return out

    def train_module(self, cuda: bool) -> list[str]:
        imports = ["import argparse", "import logging", "import os", "", "import torch",
                   "import torch.distributed as dist", "from torch.utils.data import DataLoader"]
        if cuda:
            imports.append(self.r.choice(("from torch.nn.parallel import DistributedDataParallel as DDP",
                                          "from torch.nn.parallel import DistributedDataParallel")))
            if self.chance(0.5):
                imports.append("from torch.cuda.amp import GradScaler, autocast")
        out = self.header(f"Training entry point for the {self.word()} {self.word()} model.", imports)
        out += ["logger = logging.getLogger(__name__)", "", ""]
        out += ["def parse_args(argv=None):", "    parser = argparse.ArgumentParser(description=__doc__)"]
        for _ in range(self.r.randint(4, 14)):
            flag = self.unique(lambda: self.ident()).replace("_", "-")
            out.append(f"    parser.add_argument(\"--{flag}\", type={self.r.choice(('int', 'float', 'str'))}, "
                       f"default={self.r.choice(('1', '0.5', 'None', '64'))}, help=\"{self.word()} {self.word()}\")")
        out += ["    return parser.parse_args(argv)", "", ""]
        out += ["def setup(args):"]
        if cuda:
            backend = self.r.choice(('"nccl"', '"nccl"', 'args.backend', '"gloo" if args.cpu else "nccl"'))
            out += [f"    dist.init_process_group(backend={backend})",
                    "    local_rank = int(os.environ.get(\"LOCAL_RANK\", 0))",
                    "    torch.cuda.set_device(local_rank)"]
            if self.chance(0.3):
                out.append("    os.environ[\"CUDA_VISIBLE_DEVICES\"] = str(local_rank)")
            out.append("    return local_rank")
        else:
            out += ["    dist.init_process_group(backend=\"gloo\")", "    return dist.get_rank()"]
        out += ["", ""]
        out += ["def train(model, loader, optimizer, args):", "    model.train()"]
        if cuda:
            if self.chance(0.3):
                out.append("    model = torch.nn.DataParallel(model)")
            else:
                ddp = "DDP" if any("as DDP" in line for line in imports) else "DistributedDataParallel"
                out.append(f"    model = {ddp}(model.cuda(), device_ids=[args.local_rank])")
            if "from torch.cuda.amp import GradScaler, autocast" in imports:
                out.append("    scaler = GradScaler()")
        out += ["    for epoch in range(args.epochs):", "        for step, (x, y) in enumerate(loader):"]
        if cuda:
            out += ["            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)"]
        out += ["            optimizer.zero_grad(set_to_none=True)",
                "            loss = torch.nn.functional.cross_entropy(model(x), y)",
                "            loss.backward()", "            optimizer.step()",
                "            if step % args.log_every == 0:",
                "                logger.info(\"epoch %d step %d loss %.4f\", epoch, step, loss.item())"]
        if cuda:
            out += self.cuda_snippet("        ")
        out += ["", ""]
        for _ in range(self.r.randint(1, 5)):
            out += self.pure_function()
            out.append("")
        out += ["def main(argv=None):", "    args = parse_args(argv)", "    setup(args)",
                "    logger.info(\"starting %s\", args)", "", "", "if __name__ == \"__main__\":", "    main()"]
        return out

    def util_module(self, cuda: bool) -> list[str]:
        out = self.header(f"Helpers for {self.word()} {self.word()} handling.",
                          ["import json", "import logging", "import os", "import re"]
                          + (["", "import torch"] if cuda else []))
        out += ["logger = logging.getLogger(__name__)", f"_PATTERN = re.compile(r\"^[a-z_]+{self.r.randint(0, 9)}$\")", "", ""]
        for _ in range(self.r.randint(3, 14)):
            out += self.pure_function()
            out.append("")
        if cuda:
            out += ["def get_device():", "    \"\"\"Pick the accelerator.\"\"\""]
            out += self.cuda_snippet("    ")
            out += ["    return torch.device(\"cuda\" if torch.cuda.is_available() else \"cpu\")", ""]
        elif self.chance(0.3):
            # text that only looks like CUDA code: comments and log strings
            out += ["def describe(config):", "    # on cuda hosts the nccl backend was used; now configurable",
                    "    logger.info(\"backend=%s (was nccl on cuda machines)\", config.get(\"backend\"))",
                    "    return config", ""]
        return out

    def data_module(self, cuda: bool) -> list[str]:
        out = self.header(f"{self.word().capitalize()} datasets and transforms.",
                          ["import random", "", "import torch", "from torch.utils.data import DataLoader, Dataset"])
        out += [""]
        for _ in range(self.r.randint(1, 3)):
            name = self.unique(lambda: "".join(w.capitalize() for w in (self.word(), self.word())) + "Dataset")
            out += [f"class {name}(Dataset):"]
            out += self.docstring("    ", 2)
            out += ["", "    def __init__(self, items, transform=None):", "        self.items = list(items)",
                    "        self.transform = transform", "", "    def __len__(self):", "        return len(self.items)", "",
                    "    def __getitem__(self, index):", "        item = self.items[index]",
                    "        if self.transform is not None:", "            item = self.transform(item)",
                    f"        return torch.as_tensor(item, dtype=torch.{self.r.choice(('float32', 'long', 'bfloat16'))})", "", ""]
        pin = ', pin_memory_device="cuda"' if cuda and self.chance(0.5) else ""
        out += ["def make_loader(dataset, batch_size=32, workers=4):",
                f"    return DataLoader(dataset, batch_size=batch_size, num_workers=workers, pin_memory=True{pin})", "", ""]
        for _ in range(self.r.randint(1, 4)):
            out += self.pure_function()
        return out

    def config_module(self, cuda: bool) -> list[str]:
        out = self.header("Experiment configuration.", ["from dataclasses import dataclass, field"])
        out += ["", "@dataclass", f"class {self.unique(self.cls)}Config:"]
        for _ in range(self.r.randint(8, 40)):
            kind, value = self.r.choice((("int", "0"), ("float", "1e-4"), ("str", '"adamw"'), ("bool", "True"),
                                         ("int", "512"), ("float", "0.1")))
            out.append(f"    {self.unique(lambda: self.ident())}: {kind} = {value}")
        if cuda:
            out.append(f"    backend: str = \"{self.r.choice(('nccl', 'nccl', 'gloo'))}\"")
            out.append("    device: str = \"cuda\"")
        out += ["", "", f"{self.ident().upper()} = {{"]
        for i in range(self.r.randint(10, 120)):
            out.append(f"    \"{self.word()}_{i}\": {{\"dim\": {self.r.choice((256, 512, 1024))}, \"layers\": {self.r.randint(2, 48)}, "
                       f"\"heads\": {self.r.choice((4, 8, 16))}}},")
        out += ["}"]
        return out

    def test_module(self, cuda: bool) -> list[str]:
        out = self.header("Tests.", ["import pytest", "import torch"])
        out += [""]
        for _ in range(self.r.randint(3, 12)):
            name = self.unique(lambda: "test_" + self.ident())
            if cuda and self.chance(0.4):
                out.append("@pytest.mark.skipif(not torch.cuda.is_available(), reason=\"needs a GPU\")")
            out += [f"def {name}():", f"    x = torch.randn({self.r.randint(1, 8)}, {self.r.randint(1, 8)})",
                    f"    assert x.{self.r.choice(('shape[0] > 0', 'numel() > 0', 'dim() == 2'))}"]
            if cuda and self.chance(0.3):
                out += self.cuda_snippet("    ")
            out += ["", ""]
        return out

    def long_module(self, target: int) -> list[str]:
        out = self.header("Operator registry (long module).", ["import json", "import logging", "import math", "import os", "import re"])
        out += ["logger = logging.getLogger(__name__)", "", ""]
        while len(out) < target:
            if self.chance(0.1):
                name = self.unique(self.cls)
                out += [f"class {name}:", f"    kind = \"{self.word()}\"", "", "    def __init__(self, **options):",
                        "        self.options = dict(options)", "", "    def __repr__(self):",
                        f"        return f\"{name}({{self.options!r}})\"", "", ""]
            else:
                out += self.pure_function()
                out.append("")
        return out

    def broken_module(self) -> list[str]:
        """Python 2 code and conflict markers: the scanner falls back to token level."""
        kind = self.r.randrange(3)
        if kind == 0:
            return ["import torch", "", "def report(model):", "    print \"devices:\", torch.cuda.device_count()",
                    "    try:", "        model.cuda()", "    except RuntimeError, e:", "        print e", ""]
        if kind == 1:
            return ["import torch", "", "<<<<<<< HEAD", "DEVICE = \"cuda\"", "=======",
                    "DEVICE = \"cpu\"", ">>>>>>> feature", "", "def run(x):", "    return x.to(DEVICE)", ""]
        return ["import torch", "", "def setup(rank):", "    torch.distributed.init_process_group(\"nccl\", rank=rank",
                "    return rank", ""]


KINDS = (  # (kind, weight, chance that a module of the kind uses CUDA)
    ("models", 18, 0.25),
    ("train", 6, 0.75),
    ("utils", 30, 0.05),
    ("data", 12, 0.15),
    ("configs", 8, 0.2),
    ("tests", 14, 0.2),
    ("long", 2, 0.0),
)


def generate_tree(dest: Path | str, lines: int = 200_000, seed: int = 0) -> TreeStats:
    """Write a synthetic PyTorch project with exactly `lines` lines of Python into `dest`.

    Deterministic for a given (lines, seed). Besides Python it holds a requirements file, a
    launch script, a YAML config and a few CUDA sources (not counted in `lines`).
    """
    if lines < MIN_LINES:
        raise ValueError(f"lines must be at least {MIN_LINES}")
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    rng = random.Random(f"ascend-migrate-bench/{GENERATOR_VERSION}/{seed}")
    gen = _Gen(rng)
    files: dict[str, str] = {}
    pkg = "proj"
    py_lines = 0

    def add(rel: str, body: list[str]) -> None:
        nonlocal py_lines
        files[rel] = "\n".join(body) + "\n"
        if rel.endswith(".py"):
            py_lines += len(body)

    add(f"{pkg}/__init__.py", ['"""Synthetic project used to benchmark the scanner."""', "__version__ = \"0.0.1\""])
    add("requirements.txt", ["torch>=2.1", "numpy", "flash_attn==2.5.8", "apex", "xformers", "pyyaml", "tqdm"])
    add("scripts/train.sh", ["#!/bin/sh", "export NCCL_DEBUG=INFO", "export CUDA_VISIBLE_DEVICES=0,1,2,3",
                             f"torchrun --nproc_per_node=4 -m {pkg}.train.main \"$@\""])
    add("configs/default.yaml", ["model: base", "dist:", "  backend: nccl", "  world_size: 8", "device: cuda"])
    for i in range(3):
        add(f"csrc/op_{i}.cu", ["#include <cuda_runtime.h>", "",
                                f"__global__ void op_{i}_kernel(const float* x, float* y, int n) {{",
                                "  int i = blockIdx.x * blockDim.x + threadIdx.x;",
                                "  if (i < n) y[i] = x[i] * 2.0f;", "}"])
    for d in ("models", "train", "utils", "data", "configs"):
        add(f"{pkg}/{d}/__init__.py", [f'"""{d}."""'])

    counters: dict[str, int] = {}
    weights = [k[1] for k in KINDS]
    broken_every = 150
    made = 0
    while lines - py_lines > 400:
        remaining = lines - py_lines
        made += 1
        gen.names = set()  # identifiers are unique within a module
        if made % broken_every == 0:
            kind, body = "broken", gen.broken_module()
        else:
            kind, _, p_cuda = rng.choices(KINDS, weights=weights)[0]
            cuda = rng.random() < p_cuda
            if kind == "long":
                body = gen.long_module(rng.randint(1500, 4000))
            else:
                body = getattr(gen, {"models": "model_module", "train": "train_module", "utils": "util_module",
                                     "data": "data_module", "configs": "config_module", "tests": "test_module"}[kind])(cuda)
        if len(body) >= remaining:
            continue
        counters[kind] = counters.get(kind, 0) + 1
        n = counters[kind]
        if kind == "tests":
            rel = f"tests/test_{gen.word()}_{n}.py"
        elif kind in ("long", "broken"):
            rel = f"{pkg}/legacy/{kind}_{n}.py"
        else:
            rel = f"{pkg}/{kind}/{gen.word()}_{n}.py"
        add(rel, body)
    remaining = lines - py_lines
    if remaining:
        add(f"{pkg}/constants.py", [f"{gen.ident().upper()}_{i} = {rng.randint(0, 10**6)}"
                                    for i in range(remaining)])
    assert py_lines == lines, (py_lines, lines)

    digest = hashlib.sha256()
    total_lines = size = 0
    for rel in sorted(files):
        data = files[rel].encode("utf-8")
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        digest.update(rel.encode() + b"\0" + data + b"\0")
        total_lines += data.count(b"\n")
        size += len(data)
    return TreeStats(root=str(dest), files=len(files), python_files=sum(r.endswith(".py") for r in files),
                     python_lines=py_lines, total_lines=total_lines, bytes=size, digest=digest.hexdigest())


def cached_tree(lines: int, seed: int, cache: Path = DEFAULT_CACHE) -> TreeStats:
    """The tree for (lines, seed) under `cache`, generated on first use."""
    cache.mkdir(parents=True, exist_ok=True)
    ignore = cache / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# generated benchmark trees\n*\n", encoding="utf-8")
    name = f"tree-g{GENERATOR_VERSION}-s{seed}-l{lines}"
    dest, marker = cache / name, cache / f"{name}.json"
    if marker.is_file() and dest.is_dir():
        return TreeStats(**json.loads(marker.read_text(encoding="utf-8")))
    if dest.exists():
        shutil.rmtree(dest)
    stats = generate_tree(dest, lines, seed)
    marker.write_text(json.dumps(asdict(stats), indent=2) + "\n", encoding="utf-8")
    return stats


def describe_tree(root: Path) -> TreeStats:
    """Counts for an existing tree (every file except hidden ones)."""
    files = py_files = py_lines = total = size = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for f in filenames:
            if f.startswith("."):
                continue
            try:
                data = (Path(dirpath) / f).read_bytes()
            except OSError:
                continue
            n = data.count(b"\n")
            files += 1
            total += n
            size += len(data)
            if f.endswith(".py"):
                py_files += 1
                py_lines += n
    return TreeStats(str(root), files, py_files, py_lines, total, size, digest="")


# =========================================================================== timing
CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from ascend_migrate.scan.api import scan
t1 = time.perf_counter()
jobs = int(sys.argv[3]) or None
r = scan(sys.argv[1], use_cache=sys.argv[2] == "1", jobs=jobs)
t2 = time.perf_counter()
import resource
rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"import_s": t1 - t0, "scan_s": t2 - t1, "files": r.files_scanned, "rss_kb": rss,
                  "lines": r.lines_scanned, "findings": len(r.findings), "notes": len(r.notes)}))
"""


def _children_cpu() -> float:
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


@dataclass
class Row:
    key: str
    label: str
    runs: list[float]
    inner: list[float]  # time inside scan() (scanner rows only)
    output: str
    cpu: list[float] = field(default_factory=list)  # CPU s of the process and its workers
    rss_mb: list[float] = field(default_factory=list)  # peak RSS (scanner rows)
    cpu_median_s: Optional[float] = None
    rss_max_mb: Optional[float] = None
    median_s: float = 0.0
    inner_median_s: Optional[float] = None
    x_rg_seed: float = 0.0
    x_rg_combined: float = 0.0
    lines_per_s: float = 0.0


def find_rg(explicit: Optional[str]) -> str:
    candidates = [explicit] if explicit else [str(Path(sys.executable).parent / "rg"), shutil.which("rg")]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return c
    sys.exit("ripgrep not found: pip install ripgrep (the `test` extra), or pass --rg PATH")


def run_rg(rg: str, patterns: tuple[str, ...], tree: Path, no_ignore: bool) -> tuple[float, int]:
    """Wall seconds for one `rg -n` per pattern; number of matching lines printed.

    `no_ignore` for generated trees: the cache directory holding them is git-ignored.
    """
    hits = 0
    start = time.perf_counter()
    flags = ["-n", "--no-ignore"] if no_ignore else ["-n"]
    for pattern in patterns:
        proc = subprocess.run([rg, *flags, pattern, "."], cwd=tree, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"rg failed: {proc.stderr.decode(errors='replace')}")
        hits += proc.stdout.count(b"\n")
    return time.perf_counter() - start, hits


def run_scanner(tree: Path, use_cache: bool, jobs: Optional[int], env: dict[str, str]) -> tuple[float, dict]:
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, str(tree), "1" if use_cache else "0", str(jobs or 0)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"scan failed:\n{proc.stderr.decode(errors='replace')}")
    info = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    info["cpu_s"] = _children_cpu() - cpu
    return wall, info


def run_migrate(tree: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """Wall and CPU seconds of a dry-run `migrate` (plan, verification, diff to a pipe); diff lines."""
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ascend_migrate", "migrate", str(tree)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):  # 1: some files could not be rewritten (listed, not a failure here)
        raise RuntimeError(f"ascend-migrate migrate failed:\n{proc.stderr.decode(errors='replace')}")
    return wall, _children_cpu() - cpu, proc.stdout.count(b"\n")


_LAST_EDIT = [0.0]
SETTLE_S = 2.2  # the scanner trusts nothing modified within 2 s of a scan (racy timestamps)


def edit_one_file(tree: Path, round_no: int, which: str = "largest") -> Path:
    """Change one Python file for the next run: the largest (so the re-scan has the most work
    one edit can give it) or the one of median size (a typical edit)."""
    _LAST_EDIT[0] = time.monotonic()
    files = sorted(tree.rglob("*.py"), key=lambda p: (p.stat().st_size, p.as_posix()))
    target = files[-1] if which == "largest" else files[len(files) // 2]
    data = target.read_bytes()
    marker = b"\n# bench edit "
    if marker in data:
        data = data[:data.index(marker)]
    target.write_bytes(data + marker + str(round_no).encode() + b"\n")
    return target


def settle() -> None:
    """Wait until the last edit is older than the scanner's racy window, as it is when an agent
    re-scans a tree it has not just written (otherwise no re-scan may trust the edited file)."""
    wait = SETTLE_S - (time.monotonic() - _LAST_EDIT[0])
    if wait > 0:
        time.sleep(wait)


def run_cli_scan(tree: Path, fmt: str, env: dict[str, str]) -> tuple[float, float, int]:
    """`python -m ascend_migrate scan TREE --format FMT` with the cache on, report to a pipe:
    wall and CPU seconds, bytes of report."""
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ascend_migrate", "scan", str(tree), "--format", fmt,
                           "--fail-on", "never"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"ascend-migrate scan failed:\n{proc.stderr.decode(errors='replace')}")
    return wall, _children_cpu() - cpu, len(proc.stdout)


CLI_FORMATS = ("text", "json", "sarif")


def run_cli(tree: Path, out: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ascend_migrate", "scan", str(tree), "--format", "json",
                           "-o", str(out), "--no-cache", "--fail-on", "never"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"ascend-migrate scan failed:\n{proc.stderr.decode(errors='replace')}")
    return wall


def bench(tree: Path, stats: TreeStats, repeat: int, jobs: Optional[int], rg: str, cli: bool,
          log: Callable[[str], None], no_ignore: bool = True, j1: bool = True,
          baseline_src: Optional[Path] = None, cli_warm: bool = False) -> tuple[list[Row], dict]:
    workers = jobs or os.cpu_count() or 1
    scan_cache = Path(tempfile.mkdtemp(prefix="ascend-migrate-bench-cache-"))
    own_src = str(HERE.parent / "src")
    env = dict(os.environ, ASCEND_MIGRATE_CACHE_DIR=str(scan_cache),
               PYTHONPATH=os.pathsep.join(filter(None, (own_src, os.environ.get("PYTHONPATH")))))
    base_env = None
    if baseline_src is not None:  # another version of the package, with its own cache folder
        (scan_cache / "baseline").mkdir()
        base_env = dict(env, ASCEND_MIGRATE_CACHE_DIR=str(scan_cache / "baseline"),
                        PYTHONPATH=os.pathsep.join(filter(None, (str(baseline_src), os.environ.get("PYTHONPATH")))))
    report_file = scan_cache / "report.json"
    rows = {
        "rg-seed": Row("rg-seed", f"rg -n, the guide's {len(SEED_PATTERNS)} regexes ({len(SEED_PATTERNS)} runs)", [], [], ""),
        "rg-combined": Row("rg-combined", "rg -n, the same regexes as one alternation", [], [], ""),
        "scan-cold": Row("scan-cold", f"scan, cold (no cache, {workers} workers)", [], [], ""),
        "scan-warm": Row("scan-warm", f"scan, warm (cache populated, {workers} workers)", [], [], ""),
        "scan-1-file": Row("scan-1-file", "scan, one file changed (cache populated)", [], [], ""),
        "migrate": Row("migrate", "migrate, dry run (cache populated)", [], [], ""),
    }
    if j1:
        rows["scan-cold-j1"] = Row("scan-cold-j1", "scan, cold (no cache, 1 worker)", [], [], "")
    if base_env is not None:
        rows["base-cold"] = Row("base-cold", f"baseline scan, cold (no cache, {workers} workers)", [], [], "")
        rows["base-warm"] = Row("base-warm", "baseline scan, warm (cache populated)", [], [], "")
        rows["base-1-file"] = Row("base-1-file", "baseline scan, one file changed", [], [], "")
        rows["base-migrate"] = Row("base-migrate", "baseline migrate, dry run (cache populated)", [], [], "")
    versions = [("", env)] + ([("base-", base_env)] if base_env is not None else [])
    if cli_warm:
        for prefix, _ in versions:
            who = "baseline " if prefix else ""
            for fmt in CLI_FORMATS:
                rows[f"{prefix}cli-warm-{fmt}"] = Row(f"{prefix}cli-warm-{fmt}",
                                                      f"{who}CLI scan --format {fmt}, unchanged tree", [], [], "")
            rows[f"{prefix}cli-1-file"] = Row(f"{prefix}cli-1-file", f"{who}CLI scan --format json, one file changed",
                                              [], [], "")
            rows[f"{prefix}cli-1-file-text"] = Row(f"{prefix}cli-1-file-text",
                                                   f"{who}CLI scan --format text, one file changed", [], [], "")
            rows[f"{prefix}cli-1-median"] = Row(f"{prefix}cli-1-median",
                                                f"{who}CLI scan --format json, one median-size file changed", [], [], "")
            rows[f"{prefix}cli-migrate"] = Row(f"{prefix}cli-migrate", f"{who}migrate, dry run, right after a scan",
                                               [], [], "")
    if cli:
        rows["cli-cold"] = Row("cli-cold", "ascend-migrate scan --format json -o FILE --no-cache", [], [], "")
    try:
        log("warming up: page cache (rg) and scan cache (one cached scan) ...")
        run_rg(rg, (COMBINED_PATTERN,), tree, no_ignore)
        _, warm_info = run_scanner(tree, True, jobs, env)
        if base_env is not None:
            run_scanner(tree, True, jobs, base_env)
        if cli_warm:  # every version's stored reports, so the first round starts from a scanned tree
            for _, row_env in versions:
                for fmt in CLI_FORMATS:
                    run_cli_scan(tree, fmt, row_env)
        info: dict = {}
        for round_no in range(1, repeat + 1):
            wall, hits = run_rg(rg, SEED_PATTERNS, tree, no_ignore)
            rows["rg-seed"].runs.append(wall)
            rows["rg-seed"].output = f"{hits:,} matching lines (summed over the runs)"
            wall, hits = run_rg(rg, (COMBINED_PATTERN,), tree, no_ignore)
            rows["rg-combined"].runs.append(wall)
            rows["rg-combined"].output = f"{hits:,} matching lines"
            scanner_rows = [("scan-cold", False, jobs, env), ("scan-warm", True, jobs, env),
                            ("scan-1-file", True, jobs, env)]
            if base_env is not None:  # interleaved with ours, so drift hits both alike
                scanner_rows += [("base-cold", False, jobs, base_env), ("base-warm", True, jobs, base_env),
                                 ("base-1-file", True, jobs, base_env)]
            if j1:
                scanner_rows.append(("scan-cold-j1", False, 1, env))
            for key, use_cache, j, row_env in scanner_rows:
                if key.endswith("-1-file"):  # a fresh edit for each version's index
                    edit_one_file(tree, round_no * 2 + (key == "base-1-file"))
                wall, info = run_scanner(tree, use_cache, j, row_env)
                rows[key].runs.append(wall)
                rows[key].inner.append(info["scan_s"])
                rows[key].cpu.append(info["cpu_s"])
                rows[key].rss_mb.append(info["rss_kb"] / 1024)
                rows[key].output = f"{info['findings']:,} findings in {info['files']:,} files"
            for key, row_env in (("migrate", env), ("base-migrate", base_env)):
                if row_env is None:
                    continue
                wall, cpu, diff_lines = run_migrate(tree, row_env)
                rows[key].runs.append(wall)
                rows[key].cpu.append(cpu)
                rows[key].output = f"{diff_lines:,} diff lines"
            if cli_warm:
                for prefix, row_env in versions:  # the agent's loop: edit, scan, scan, migrate
                    edit_one_file(tree, round_no * 2 + (prefix == "base-") + 100)
                    wall, cpu, size = run_cli_scan(tree, "json", row_env)
                    _record(rows[f"{prefix}cli-1-file"], wall, cpu, f"{size:,} bytes of report")
                    edit_one_file(tree, round_no * 2 + (prefix == "base-") + 300, "median")
                    wall, cpu, size = run_cli_scan(tree, "json", row_env)
                    _record(rows[f"{prefix}cli-1-median"], wall, cpu, f"{size:,} bytes of report")
                    run_cli_scan(tree, "text", row_env)  # the text report as of both edits (not timed)
                    edit_one_file(tree, round_no * 2 + (prefix == "base-") + 200)
                    wall, cpu, size = run_cli_scan(tree, "text", row_env)
                    _record(rows[f"{prefix}cli-1-file-text"], wall, cpu, f"{size:,} bytes of report")
                    settle()
                    for fmt in CLI_FORMATS:
                        run_cli_scan(tree, fmt, row_env)  # primes the stored report (not timed)
                        wall, cpu, size = run_cli_scan(tree, fmt, row_env)
                        _record(rows[f"{prefix}cli-warm-{fmt}"], wall, cpu, f"{size:,} bytes of report")
                    wall, cpu, diff_lines = run_migrate(tree, row_env)
                    _record(rows[f"{prefix}cli-migrate"], wall, cpu, f"{diff_lines:,} diff lines")
            if cli:
                rows["cli-cold"].runs.append(run_cli(tree, report_file, env))
                rows["cli-cold"].output = "report written"
            log(f"round {round_no}/{repeat}: " + ", ".join(f"{k} {r.runs[-1]:.2f}s" for k, r in rows.items()))
    finally:
        shutil.rmtree(scan_cache, ignore_errors=True)
    base_seed = statistics.median(rows["rg-seed"].runs)
    base_comb = statistics.median(rows["rg-combined"].runs)
    for row in rows.values():
        row.median_s = statistics.median(row.runs)
        row.inner_median_s = statistics.median(row.inner) if row.inner else None
        row.cpu_median_s = statistics.median(row.cpu) if row.cpu else None
        row.rss_max_mb = max(row.rss_mb) if row.rss_mb else None
        row.x_rg_seed = row.median_s / base_seed
        row.x_rg_combined = row.median_s / base_comb
        row.lines_per_s = stats.total_lines / row.median_s
    return list(rows.values()), {"files_scanned": warm_info["files"], "lines_scanned": warm_info["lines"],
                                 "findings": warm_info["findings"], "notes": warm_info["notes"]}


def _record(row: Row, wall: float, cpu: float, output: str) -> None:
    row.runs.append(wall)
    row.cpu.append(cpu)
    row.output = output


def rg_version(rg: str) -> str:
    out = subprocess.run([rg, "--version"], stdout=subprocess.PIPE, text=True).stdout
    return out.splitlines()[0].split()[1] if out else "?"


def _loadavg() -> Optional[float]:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):  # not on every platform
        return None


def table(rows: list[Row]) -> str:
    lines = ["| what | median s | scan() s | CPU s | peak RSS MB | × rg (10 runs) | × rg (1 run) | lines/s | output |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        inner = f"{r.inner_median_s:.3f}" if r.inner_median_s is not None else "—"
        cpu = f"{r.cpu_median_s:.2f}" if r.cpu_median_s is not None else "—"
        rss = f"{r.rss_max_mb:.0f}" if r.rss_max_mb is not None else "—"
        lines.append(f"| {r.label} | {r.median_s:.3f} | {inner} | {cpu} | {rss} | {r.x_rg_seed:.1f} | "
                     f"{r.x_rg_combined:.1f} | {r.lines_per_s:,.0f} | {r.output} |")
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Numbers go in bench/README.md; run on an otherwise idle machine.")
    ap.add_argument("--lines", type=int, default=200_000, help="Python lines in the generated tree (default 200000)")
    ap.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    ap.add_argument("--repeat", type=int, default=5, help="timed rounds; the median is reported (default 5)")
    ap.add_argument("--tree", type=Path, help="benchmark this existing tree instead of a generated one")
    ap.add_argument("--jobs", type=int, help="scanner workers for the default rows (default: one per core)")
    ap.add_argument("--cli", action="store_true", help="also time the CLI end to end (JSON report written)")
    ap.add_argument("--cli-warm", action="store_true",
                    help="also time the CLI in an agent's loop: one file edited then scanned (JSON), the unchanged "
                         "tree re-scanned in each of text/json/sarif, then a dry-run migrate")
    ap.add_argument("--json", dest="json_out", type=Path, metavar="FILE", help="also write the results as JSON")
    ap.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE, help="where generated trees are kept")
    ap.add_argument("--rg", help="ripgrep binary (default: the one installed next to this Python, else PATH)")
    ap.add_argument("--generate-only", action="store_true", help="build (or reuse) the tree, print its stats, stop")
    ap.add_argument("--baseline-src", type=Path, metavar="DIR",
                    help="also time another version's scanner (its src/ folder, e.g. from `git worktree add`) "
                         "in the same rounds: cold, warm and one-file rows")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if args.lines < MIN_LINES:
        ap.error(f"--lines must be at least {MIN_LINES}")

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    if args.tree:
        tree = args.tree.resolve()
        if not tree.is_dir():
            ap.error(f"{tree}: not a directory")
        stats = describe_tree(tree)
    else:
        started = time.perf_counter()
        stats = cached_tree(args.lines, args.seed, args.cache_dir)
        tree = Path(stats.root)
        log(f"tree ready in {time.perf_counter() - started:.1f} s: {tree}")
    if args.generate_only:
        print(json.dumps(asdict(stats), indent=2))
        return 0

    rg = find_rg(args.rg)
    from ascend_migrate import __version__

    load_before = _loadavg()
    work = Path(tempfile.mkdtemp(prefix="ascend-migrate-bench-tree-"))
    try:  # a copy: the one-file-changed row edits it
        copy = work / tree.name
        shutil.copytree(tree, copy, symlinks=True)
        rows, scan_info = bench(copy, stats, args.repeat, args.jobs, rg, args.cli, log, no_ignore=not args.tree,
                                j1=not args.tree, baseline_src=args.baseline_src.resolve() if args.baseline_src else None,
                                cli_warm=args.cli_warm)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    machine = {"load_before": load_before, "load_after": _loadavg(), "cpus": os.cpu_count(),
               "platform": f"{platform.system()} {platform.machine()}",
               "python": platform.python_version(), "ripgrep": rg_version(rg), "ascend_migrate": __version__,
               "bytecode_cache": not os.environ.get("PYTHONDONTWRITEBYTECODE"),
               "baseline_src": str(args.baseline_src) if args.baseline_src else None}
    head = (f"tree: {stats.files:,} files, {stats.python_files:,} Python files, {stats.python_lines:,} Python lines, "
            f"{stats.total_lines:,} lines in all ({stats.bytes / 2**20:.1f} MiB)"
            + ("" if args.tree else f", generator seed {args.seed}"))
    mach = (f"machine: {machine['cpus']} CPUs, {machine['platform']}, Python {machine['python']}, "
            f"ripgrep {machine['ripgrep']}, ascend-migrate {machine['ascend_migrate']}; median of {args.repeat} rounds; "
            f"1-min load average {machine['load_before']} before, {machine['load_after']} after; "
            f"bytecode cache {'on' if machine['bytecode_cache'] else 'off (PYTHONDONTWRITEBYTECODE)'}")
    print(head)
    print(mach)
    print()
    print(table(rows))
    if args.json_out:
        data = {"tree": asdict(stats), "generated": not args.tree, "seed": None if args.tree else args.seed,
                "machine": machine, "repeat": args.repeat, "scanner": scan_info,
                "patterns": list(SEED_PATTERNS), "rows": [asdict(r) for r in rows],
                "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        args.json_out.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        log(f"wrote {args.json_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
