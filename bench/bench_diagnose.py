#!/usr/bin/env python3
"""`ascend-migrate diagnose` on a large log, side by side with ripgrep over the same signatures.

Builds (or reuses) a deterministic synthetic training/serving log of --mb megabytes (default
50): the noise of a real run (step lines, vLLM worker lines, warnings, tracebacks of handled
exceptions, progress bars with carriage returns) with one known error line from the
knowledge base planted about every megabyte. Then, in one run and interleaved round by round:

  diagnose     `python -m ascend_migrate diagnose LOG --format json` (fresh process)
  diagnose-S   the same on a log of --small-mb megabytes, to show memory does not grow
  rg           `rg -c -f PATTERNS LOG`: every signature pattern of the knowledge base in one
               ripgrep run (the baseline: a fast regex engine over the same signatures)
  grep-E       `grep -c -E -f PATTERNS LOG` where ripgrep is absent (--grep forces it)

Each row is a fresh process timed from outside: wall clock, CPU time (user + system) and
peak memory (max RSS) of that child alone. The median of --repeat rounds is reported, with
the planted errors diagnose found and the lines the baseline counted.

    python bench/bench_diagnose.py                 # 50 MB, 3 rounds
    python bench/bench_diagnose.py --mb 200 --repeat 1 --json out.json
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_CACHE = HERE / ".cache"
GENERATOR_VERSION = 1

sys.path.insert(0, str(REPO / "src"))

NOISE = (
    "{ts} INFO step {n}/200000 loss={loss:.4f} lr=2.0e-05 grad_norm={g:.3f} tokens/s={tps}",
    "[rank{r}]: {ts} | iteration {n} | consumed samples {cs} | elapsed time per iteration (ms): {ms}",
    "(VllmWorker rank={r} pid={pid}) INFO {md} {hms} [model_runner.py:1311] Graph capturing finished in {ms} secs",
    "INFO:     10.233.74.{r}:{pid} - \"POST /v1/chat/completions HTTP/1.1\" 200 OK",
    "{ts} - llamafactory.train.callbacks - INFO - {{'loss': {loss:.4f}, 'learning_rate': 1.9e-05, 'epoch': 0.{n}}}",
    "  File \"/usr/local/python3.10/lib/python3.10/site-packages/transformers/trainer.py\", line {n}, in _inner_training_loop",
    "W{md2} {hms}.{us} {pid} site-packages/torch/distributed/run.py:793] OMP_NUM_THREADS is set to 1 for each process",
    "Saving model checkpoint to /ckpt/checkpoint-{n}; shard {r} of 8 written ({ms} ms)",
    "{{'eval_loss': {loss:.4f}, 'eval_runtime': {ms}.1, 'eval_samples_per_second': 41.2, 'epoch': 1.0}}",
    "Loading checkpoint shards:  {p}%|#####     | {r}/8 [00:0{r}<00:0{r}, 1.24it/s]\r"
    "Loading checkpoint shards: 100%|##########| 8/8 [00:06<00:00, 1.24it/s]",
    "[INFO] PTA(_{pid}):{ts} set device {r} of 8, HBM usage {ms} MB, stream {n} ready",
)


def _noise_line(rng: random.Random, n: int) -> str:
    tmpl = NOISE[rng.randrange(len(NOISE))]
    return tmpl.format(
        ts=f"2025-06-{1 + n // 400000:02d} 10:{(n // 6000) % 60:02d}:{(n // 100) % 60:02d}",
        md=f"06-{1 + n // 400000:02d}", md2=f"06{1 + n // 400000:02d}",
        hms=f"10:{(n // 6000) % 60:02d}:{(n // 100) % 60:02d}", us=f"{n % 1000000:06d}",
        n=n, loss=2.5 - (n % 1000) / 1000.0, g=rng.random(), tps=10000 + n % 997, r=n % 8,
        cs=n * 64, ms=100 + n % 900, pid=1000 + n % 50000, p=(n % 9) * 10,
    )


def build_log(path: Path, mb: float, seed: int = 0) -> list[str]:
    """Write the log unless an identical one exists; return the planted signature ids."""
    from ascend_migrate.diagnose.kb import default_kb

    kb = default_kb()
    planted = [s for s in kb.signatures if s.severity == "error" and "\n" not in s.example]
    stamp = path.with_suffix(".meta.json")
    target = int(mb * 1_000_000)
    meta = {"version": GENERATOR_VERSION, "bytes": target, "seed": seed, "planted": [s.id for s in planted]}
    if path.exists() and stamp.exists() and json.loads(stamp.read_text()) == meta:
        return meta["planted"]
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    written, n, every = 0, 0, max(1, target // max(1, len(planted)))
    next_plant, k = every // 2, 0
    with open(path, "w", encoding="utf-8", newline="") as f:
        while written < target:
            if written >= next_plant and k < len(planted):
                line = planted[k].example
                k += 1
                next_plant += every
            else:
                line = _noise_line(rng, n)
            n += 1
            f.write(line + "\n")
            written += len(line.encode()) + 1
    stamp.write_text(json.dumps(meta))
    return meta["planted"]


def _run_rss(cmd: list[str]) -> tuple[float, int, str, int]:
    """Like _run, but the peak RSS of this child alone (os.wait4)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    chunks = []
    assert proc.stdout is not None
    for chunk in iter(lambda: proc.stdout.read(1 << 16), b""):
        chunks.append(chunk)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    return wall, usage.ru_maxrss, b"".join(chunks).decode(), usage.ru_utime + usage.ru_stime


def to_ere(pattern: str) -> str:
    """A Python regex in POSIX ERE for `grep -E` (case folding is applied to all via -i)."""
    import re

    text = re.sub(r"\(\?(?:P<\w+>|:|i:)", "(", pattern.replace("(?i)", ""))
    classes = {"d": ("[0-9]", "0-9"), "s": ("[[:space:]]", "[:space:]"), "w": ("[[:alnum:]_]", "[:alnum:]_"),
               "S": ("[^[:space:]]", None)}
    out, i, in_set = [], 0, False
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt in classes:
                outside, inside = classes[nxt]
                out.append(inside if in_set and inside else outside)
            elif in_set:
                out.append(nxt)  # [\.] in ERE is just [.]
            else:
                out.append(c + nxt)
            i += 2
            continue
        if c == "[" and not in_set:
            in_set = True
        elif c == "]" and in_set and out and out[-1] != "[":
            in_set = False
        out.append(c)
        i += 1
    return "".join(out)


def patterns_file(dest: Path, ere: bool = False) -> tuple[Path, int]:
    from ascend_migrate.diagnose.kb import default_kb

    import re

    # ripgrep rejects a capture-group name used twice in one run: make named groups plain
    pats = [re.sub(r"\(\?P<\w+>", "(?:", p.pattern) for s in default_kb().signatures for p in s.patterns]
    if ere:
        pats = [to_ere(p) for p in pats]
    else:
        # ripgrep's default engine has no look-around (and pip's ripgrep is built without PCRE2):
        # it gets every other pattern, so its time is a lower bound for the whole set and the
        # ratio diagnose/rg an upper bound
        pats = [p for p in pats if not re.search(r"\(\?<?[=!]", p)]
    dest.write_text("\n".join(pats) + "\n")
    return dest, len(pats)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--small-mb", type=float, default=10.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--rg", default=None, help="path to ripgrep (default: next to python, then PATH)")
    ap.add_argument("--grep", action="store_true", help="use grep -E as the baseline even if rg exists")
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    args = ap.parse_args(argv)

    big = args.cache / f"diagnose-{args.mb:g}mb.log"
    small = args.cache / f"diagnose-{args.small_mb:g}mb.log"
    planted = build_log(big, args.mb, args.seed)
    build_log(small, args.small_mb, args.seed)
    rg = None if args.grep else (args.rg or next((c for c in (str(Path(sys.executable).parent / "rg"), shutil.which("rg")) if c and Path(c).exists()), None))
    pats, n_pats = patterns_file(args.cache / ("diagnose-patterns.txt" if rg else "diagnose-patterns.ere"), ere=not rg)
    for f in (big, small):  # warm the page cache
        with open(f, "rb") as fh:
            while fh.read(1 << 24):
                pass

    base_name = "rg" if rg else "grep -E"
    if not rg:
        print("ripgrep not found (or --grep): the baseline is grep -E -i over the same patterns in POSIX ERE")
    base_cmd = [rg, "-c", "--no-config", "-f", str(pats), str(big)] if rg else ["grep", "-c", "-E", "-i", "-f", str(pats), str(big)]
    py = [sys.executable, "-m", "ascend_migrate", "diagnose", "--format", "json"]
    rows = {"diagnose": py + [str(big)], "diagnose-S": py + [str(small)], base_name: base_cmd}
    times: dict[str, list[float]] = {k: [] for k in rows}
    cpu: dict[str, list[float]] = {k: [] for k in rows}
    rss: dict[str, list[int]] = {k: [] for k in rows}
    outs: dict[str, str] = {}
    for _ in range(args.repeat):
        for name, cmd in rows.items():
            wall, peak, out, used = _run_rss(cmd)
            times[name].append(wall)
            cpu[name].append(used)
            rss[name].append(peak)
            outs[name] = out

    rep = json.loads(outs["diagnose"])
    found = {m["id"] for m in rep["matches"]}
    missed = sorted(set(planted) - found)
    size = {"diagnose": big.stat().st_size, "diagnose-S": small.stat().st_size, base_name: big.stat().st_size}
    result = {
        "machine": f"{platform.machine()} {platform.system()}, python {platform.python_version()}, {os.cpu_count()} cpus",
        "load_average": round(os.getloadavg()[0], 2),
        "patterns": n_pats,
        "planted": len(planted),
        "baseline": base_name,
        "rows": {
            name: {
                "mb": round(size[name] / 1e6, 1),
                "median_s": round(statistics.median(times[name]), 3),
                "median_cpu_s": round(statistics.median(cpu[name]), 3),
                "mb_per_s": round(size[name] / 1e6 / statistics.median(times[name]), 1),
                "peak_rss_mb": round(max(rss[name]) / 1024, 1),
            }
            for name in rows
        },
        "diagnose_found_planted": len(planted) - len(missed),
        "diagnose_missed": missed,
        "baseline_matching_lines": int(outs[base_name].strip() or 0),
        "diagnose_lines_with_a_match": sum(m["count"] for m in rep["matches"]),
    }
    print(f"log: {size['diagnose'] / 1e6:.1f} MB, {len(planted)} planted errors, {n_pats} signature patterns; "
          f"median of {args.repeat} round(s); {result['machine']}")
    print(f"load average {result['load_average']} (wall times on a shared machine include waiting for a core)")
    print(f"{'row':<12} {'MB':>6} {'wall s':>8} {'cpu s':>7} {'MB/s':>7} {'peak RSS MB':>12}")
    for name, r in result["rows"].items():
        print(f"{name:<12} {r['mb']:>6} {r['median_s']:>8} {r['median_cpu_s']:>7} {r['mb_per_s']:>7} {r['peak_rss_mb']:>12}")
    print(f"diagnose found {result['diagnose_found_planted']}/{len(planted)} planted errors"
          + (f" (missed: {', '.join(missed)})" if missed else "")
          + f"; {base_name} counted {result['baseline_matching_lines']} matching lines")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0 if not missed else 1


if __name__ == "__main__":
    raise SystemExit(main())
