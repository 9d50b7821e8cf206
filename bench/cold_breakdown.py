#!/usr/bin/env python3
"""Where a cold scan's CPU goes, phase by phase, and what the workers' GC setting saves.

    python bench/cold_breakdown.py TREE [--src DIR] [--rounds 2]

Phases are timed in one process with `time.process_time()` (no profiler, so no distortion):
importing the scanner, loading the knowledge base and coverage, the walk, reading and
hashing the files, decoding, the prefilter, `ast.parse` of every module, the analysis of the
modules the prefilter admits (given their tree), and every other file. Each module's tree is
dropped after its analysis, as in a scan. Then a one-process cold scan (`run_scan(jobs=1,
use_cache=False)`) is timed in fresh interpreters with the default garbage-collector
settings and with `engine.worker_gc()` (what the scan's worker processes use), interleaved,
`--rounds` times each.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

PHASES = r"""
import ast, json, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
root = Path(sys.argv[2])
clock = time.process_time
t = clock(); out = {}
from ascend_migrate.scan import engine, prefilter
try:  # the names since the scanner's split; older sources (a baseline) keep them private in engine
    from ascend_migrate.scan.file_analysis import decode_source
    load_coverage = engine.load_coverage
except ImportError:
    decode_source, load_coverage = engine._decode, engine._load_coverage
from ascend_migrate.knowledge.base import load_knowledge
out["import the scanner"] = clock() - t; t = clock()
kb = load_knowledge(); cov = load_coverage(engine.resolve_npu_version(None))
out["load knowledge base and coverage"] = clock() - t; t = clock()
jobs = engine.discover(root, (), [])
out["discover (walk)"] = clock() - t; t = clock()
data = {}
for j in jobs:
    try:
        b = (root / j.rel).read_bytes()
    except OSError:
        continue
    if len(b) <= engine.MAX_FILE_BYTES:
        data[j.rel] = (j, b)
out["read files"] = clock() - t; t = clock()
for j, b in data.values():
    engine.content_key(b)
out["hash files"] = clock() - t; t = clock()
texts = {}
for rel, (j, b) in data.items():
    if j.kind == "python":
        text, problem = decode_source(b)
        if text is not None and not problem:
            texts[rel] = text
out["decode Python"] = clock() - t; t = clock()
admitted = {rel for rel, s in texts.items() if rel.endswith("__main__.py") or rel.lower().endswith("setup.py")
            or prefilter.needs_analysis(s, kb)}
out["prefilter"] = clock() - t
parse = analyse = 0.0
for rel, s in texts.items():
    t = clock()
    try:
        tree = ast.parse(s, filename=rel)
    except Exception:
        continue
    parse += clock() - t
    if rel in admitted:
        t = clock()
        engine.analyse_python_text(engine.Job(rel, "python"), s, kb, cov, tree=tree)
        analyse += clock() - t
    del tree
out["ast.parse of every module"] = parse
out["analysis of the admitted modules"] = analyse
t = clock()
for rel, (j, b) in data.items():
    if j.kind != "python":
        engine._safe_analyse(j, b, kb, cov)
out["every other file (configs, shell, .cu, notebooks, ...)"] = clock() - t
out["_counts"] = [len(texts), len(admitted), len(data) - len(texts)]
print(json.dumps(out))
"""

SCAN = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from ascend_migrate.scan import engine
if sys.argv[3] == "worker_gc":
    engine.worker_gc()
t = time.process_time()
r = engine.run_scan(Path(sys.argv[2]), use_cache=False, jobs=1)
print(time.process_time() - t, len(r.findings))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tree", type=Path)
    ap.add_argument("--src", type=Path, default=Path(__file__).resolve().parents[1] / "src")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    phases = json.loads(subprocess.run([sys.executable, "-c", PHASES, str(args.src), str(args.tree)],
                                       capture_output=True, text=True, check=True).stdout)
    modules, admitted, others = phases.pop("_counts")
    print(f"{modules} Python modules, {admitted} admitted by the prefilter, {others} other files")
    print("| phase | CPU s |\n|---|---:|")
    for name, seconds in phases.items():
        print(f"| {name} | {seconds:.2f} |")
    runs: dict[str, list[float]] = {"default": [], "worker_gc": []}
    for _ in range(args.rounds):
        for mode in runs:
            out = subprocess.run([sys.executable, "-c", SCAN, str(args.src), str(args.tree), mode],
                                 capture_output=True, text=True, check=True).stdout.split()
            runs[mode].append(float(out[0]))
    base = statistics.median(runs["default"])
    print("\n| one-process cold scan | median CPU s | runs |\n|---|---:|---|")
    for mode, values in runs.items():
        print(f"| GC {mode} | {statistics.median(values):.2f} ({statistics.median(values) / base:.2f}x) | "
              + ", ".join(f"{v:.2f}" for v in values) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
