#!/usr/bin/env python3
"""Time and peak memory of `diagnose` and `scan` on crafted inputs, side by side with a baseline.

Builds the inputs in a temporary folder (nothing is downloaded), then runs each case as a fresh
process of the CLI, once with this checkout's package and once with `--baseline-src DIR`
(another version's src/ folder) if given, interleaved. Each process reports its own wall time
and peak RSS (getrusage). A run that passes --timeout is stopped and shown as such.

    python bench/hostile.py                                   # this checkout only
    python bench/hostile.py --baseline-src /tmp/old/src       # side by side
    python bench/hostile.py --markdown bench/hostile.md       # also write the table
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"

PROBE = r"""
import resource, sys, time, json
sys.argv = ["ascend-migrate"] + sys.argv[1:]
start = time.perf_counter()
code = 0
try:
    from ascend_migrate.cli import cli
    cli.main(args=sys.argv[1:], prog_name="ascend-migrate", standalone_mode=False)
except SystemExit as exc:
    code = exc.code or 0
except Exception as exc:
    if hasattr(exc, "exit_code"):  # click's own errors: the exit status the command gives
        code = exc.exit_code
    else:
        code = repr(exc)[:80]
sys.stderr.write("\nPROBE " + json.dumps({"s": time.perf_counter() - start, "exit": code,
                 "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}) + "\n")
"""


def _line_file(path: Path, size: int, compress: bool = False) -> None:
    """One line of `size` bytes of training-log text with one known failure in the middle."""
    unit = b"worker step 1234 loss 0.25 lr 0.001 tokens 4096 " * 20000
    opener = gzip.open(path, "wb", compresslevel=6) if compress else path.open("wb")
    with opener as fh:
        written = 0
        while written < size:
            piece = unit[: min(len(unit), size - written)]
            if written <= size // 2 < written + len(piece):
                piece = piece[:100] + b" EH9999: init env failed " + piece[125:]
            fh.write(piece)
            written += len(piece)
        fh.write(b"\n")


def build(root: Path) -> list[tuple[str, list[str]]]:
    """The crafted inputs and the command line for each."""
    cases: list[tuple[str, list[str]]] = []
    logs = root / "logs"
    logs.mkdir()
    _line_file(logs / "one-line-100MB.log", 100 << 20)
    cases.append(("diagnose: one 100 MB line", ["diagnose", str(logs / "one-line-100MB.log")]))
    _line_file(logs / "one-line-200MB.log.gz", 200 << 20, compress=True)
    size = (logs / "one-line-200MB.log.gz").stat().st_size
    cases.append((f"diagnose: {size >> 10} KB .gz inflating to one 200 MB line",
                  ["diagnose", str(logs / "one-line-200MB.log.gz")]))
    # every literal the signature needs is on the line (so the prefilter lets it through), but
    # never in the order it needs: `notify wait.*time ?out` backtracked from every `notify wait`
    (logs / "notify.log").write_text("timeout first, then " + "notify wait " * 8_000 + "\n", encoding="utf-8")
    cases.append(("diagnose: 96 kB line, one signature's parts in the wrong order",
                  ["diagnose", str(logs / "notify.log")]))

    def tree(name: str, files: dict[str, str]) -> Path:
        base = root / name
        for rel, text in files.items():
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / rel).write_text(text, encoding="utf-8")
        return base

    head = "import torch\nx = torch.zeros(1).cuda()\n"
    shell = tree("shell", {"run.sh": "python train.py --cfg " + "a-" * 1_500 + "\n", "train.py": head})
    cases.append(("scan: 3,000-character shell line", ["scan", str(shell), "--no-cache"]))
    pyproject = tree("pyproject", {"pyproject.toml": "[project]\nname = \"p\"\n[project.scripts]\n"
                                   + "w" * 20_000 + "\n", "p/__init__.py": ""})
    cases.append(("scan: pyproject with a 20 kB word", ["scan", str(pyproject), "--no-cache"]))
    deep = tree("deep", {"deep.py": head + "y = " + "-" * 100_000 + "1\n"})
    cases.append(("scan: 100,000 unary minus signs", ["scan", str(deep), "--no-cache"]))
    gen = tree("generated", {"gen.py": "import torch\n" + "".join(f"x{i} = torch.zeros(1).cuda()\n"
                                                                  for i in range(35_000))})
    cases.append(("scan: 1 MB generated file, 35,000 findings (JSON report)",
                  ["scan", str(gen), "--no-cache", "--format", "json", "-o", str(root / "gen.json")]))
    # one long token: every embedded `nccl` measured the whole token and copied it into a finding
    token = "nccl-" * 10_000
    ds = tree("ds", {"ds_config.json": '{"train_batch_size": 8,\n "comm": "%s"}\n' % token})
    cases.append(("scan: ds_config.json with one 50 kB `nccl-nccl-...` string", ["scan", str(ds), "--no-cache"]))
    sh = tree("export", {"run.sh": 'export X="%s"\npython train.py\n' % token, "train.py": head})
    cases.append(("scan: run.sh with `export X=\"nccl-nccl-...\"` (50 kB)", ["scan", str(sh), "--no-cache"]))
    many = tree("many", {"gen.py": "import torch\n" + "torch.cuda.synchronize()\n" * 160_000})
    cases.append(("scan: 3.9 MB file of 160,000 `torch.cuda.synchronize()` lines", ["scan", str(many), "--no-cache"]))
    # one line of many calls: each call's parent was found by a pass over the whole list
    line = tree("one-line", {"gen.py": "import torch\nx = [" + "torch.cuda.synchronize(), " * 24_600 + "]\n"})
    cases.append(("scan: one 640 kB line of 24,600 `torch.cuda.synchronize()` calls", ["scan", str(line), "--no-cache"]))
    # one launch line of one long word: shlex grew the word a character at a time
    launch = tree("launch", {"run.sh": "python " + "x.pyx" * 320_000 + "\n"})
    cases.append(("scan: 1.6 MB launch line `python x.pyx...`", ["scan", str(launch), "--no-cache"]))
    wheel = root / "torch_npu-9.9.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("torch_npu/__init__.py", "")
        zf.writestr("torch_npu/version.py", "__version__ = '9.9.0'\n")
        zf.writestr("torch_npu-9.9.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: torch-npu\nVersion: 9.9.0\n")
        zf.writestr("torch_npu/npu/__init__.py", "__all__ = [" + "'a'," * 2_000_000 + "]\n")
    cases.append((f"kb sync: {wheel.stat().st_size >> 10} kB wheel, npu/__init__.py an 8 MB `__all__`",
                  ["kb", "sync", "--wheel", str(wheel), "--out", str(root / "kb"), "--force"]))
    return cases


def run(src: Path, args: list[str], timeout: float) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src))
    start = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True,
                             timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"s": time.perf_counter() - start, "exit": "timeout", "rss_mb": None}
    for line in reversed(out.stderr.splitlines()):
        if line.startswith("PROBE "):
            return json.loads(line[6:])
    return {"s": time.perf_counter() - start, "exit": "crashed", "rss_mb": None}


def _cell(r: dict) -> str:
    rss = f"{r['rss_mb']:.0f} MB" if r.get("rss_mb") else "—"
    return f"{r['s']:.2f} s | {rss} | {r['exit']}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline-src", type=Path, help="another version's src/ folder, run in the same rounds")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds before a run is stopped")
    ap.add_argument("--markdown", type=Path, help="also write the table to this file")
    ap.add_argument("--only", default="", help="run only the inputs whose name contains this text")
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="hostile-bench-") as tmp:
        cases = build(Path(tmp))
        header = "| input | this version: time | peak RSS | exit |"
        rule = "|---|---:|---:|---|"
        if opts.baseline_src:
            header += " baseline: time | peak RSS | exit |"
            rule += "---:|---:|---|"
        rows = [header, rule]
        for name, args in cases:
            if opts.only not in name:
                continue
            ours = run(SRC, args, opts.timeout)
            row = f"| {name} | {_cell(ours)} |"
            if opts.baseline_src:
                row += f" {_cell(run(opts.baseline_src, args, opts.timeout))} |"
            rows.append(row)
            print(row, flush=True)
    table = "\n".join(rows) + "\n"
    if opts.markdown:
        opts.markdown.write_text(table, encoding="utf-8")


if __name__ == "__main__":
    main()
