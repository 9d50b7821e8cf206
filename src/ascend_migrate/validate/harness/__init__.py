"""Running a project's own training command unchanged under an injected harness.

The parent (`validate capture ... -- COMMAND`, `validate run PORT ... -- COMMAND`) starts the
command with `harness_env(...)` as its environment. SITE_DIR, first on the child's PYTHONPATH,
holds a `sitecustomize` that switches the harness on in every Python process of the command
(torchrun's workers, spawned children): once the program has imported torch, each optimizer step
and each loss passed to backward is recorded; after `steps` counted steps the process writes its
record and leaves (exit code STOP_EXIT_CODE, or 0 with status "stopped" under torchrun and in
multiprocessing children). The parent reads the per-process records with `read_records` and
watches `progress` for its no-progress limit.

Record (one JSON file per process that called backward or stepped an optimizer,
`rank-<RANK>-<pid>.json`), schema RECORD_SCHEMA:
    schema, pid, rank, world_size,
    status: "stopped" | "finished" | "exit" | "exception",
    exit: {"code": n} (stopped, exit) | {"type", "message", "traceback": [lines]} (exception)
          | None (finished),
    steps (counted optimizer steps), skipped_steps (GradScaler skipped the step: inf/nan),
    step_limit (0: none), losses ([[float | None, ...] per step]: every loss passed to backward
    since the previous step; None for a non-scalar backward), pending_losses (after the last
    step), loss_source ("backward" | "scaled-backward": recorded unscaled),
    params ({digest, sum, count, numel, hash} after the last counted step, or None),
    threads (set by the harness, or None), num_threads (torch's at the end), seed (applied or
    None), torch (version), device (of the first parameter), optimizer (qualified class name),
    python, argv, sites ({file: {line: "ran" | "not-run" | "unprobeable"}} or None),
    site_details ({file: {line: {"statement": n, "reason": text}}} or None),
    step_times ([seconds per counted step]; the first from the first backward or step),
    notes ([text]).
`read_records` gives `sites` and `site_details` line numbers back as int keys.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict, List, Optional

from .inject import _ascend_migrate_harness as _names

SITE_DIR: Path = Path(__file__).resolve().parent / "inject"

ENV_DIR = _names.ENV_DIR
ENV_STEPS = _names.ENV_STEPS
ENV_SEED = _names.ENV_SEED
ENV_THREADS = _names.ENV_THREADS
ENV_SITES = _names.ENV_SITES
STOP_EXIT_CODE: int = _names.STOP_EXIT_CODE
RECORD_SCHEMA: str = _names.SCHEMA
SITES_FILE: str = _names.SITES_FILE

_INTERNAL = (_names.ENV_RELAUNCHED, _names.ENV_ORIG_ARGV)

__all__ = ["SITE_DIR", "STOP_EXIT_CODE", "RECORD_SCHEMA", "ENV_DIR", "ENV_STEPS", "ENV_SEED",
           "ENV_THREADS", "ENV_SITES", "Records", "harness_env", "read_records", "progress"]


def harness_env(out_dir: Path, *, steps: int, seed: Optional[int] = 0,
                threads: Optional[int] = 1, sites: Optional[Dict[str, List[int]]] = None,
                base: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The environment of a child command run under the harness.

    `out_dir` is created; records and progress files go there (use a fresh folder per run).
    `steps` counted optimizer steps, then the stop (0: no stop). `seed` / `threads`: applied when
    the program has imported torch (None: left alone). `sites`: {absolute file path: [line, ...]},
    written to out_dir/sites.json. `base`: the environment to start from (default os.environ).
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise ValueError(f"steps must be an integer >= 0, not {steps!r}")
    for name, value in (("seed", seed), ("threads", threads)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError(f"{name} must be an integer or None, not {value!r}")
    if threads is not None and threads < 1:
        raise ValueError(f"threads must be >= 1, not {threads}")
    out = Path(out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ if base is None else base)
    for name in (ENV_SEED, ENV_THREADS, ENV_SITES) + _INTERNAL:
        env.pop(name, None)
    site_dir = str(SITE_DIR)
    kept = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != site_dir]
    env["PYTHONPATH"] = os.pathsep.join([site_dir] + kept)
    env[ENV_DIR] = str(out)
    env[ENV_STEPS] = str(steps)
    if seed is not None:
        env[ENV_SEED] = str(seed)
    if threads is not None:
        env[ENV_THREADS] = str(threads)
    if sites is not None:
        files: Dict[str, List[int]] = {}
        for path, lines in sites.items():
            if not os.path.isabs(path):
                raise ValueError(f"edit-site paths must be absolute: {path!r}")
            numbers = sorted({int(n) for n in lines})
            if any(n < 1 for n in numbers):
                raise ValueError(f"line numbers start at 1: {path!r} {numbers}")
            files[str(path)] = numbers
        target = out / SITES_FILE
        target.write_text(json.dumps({"files": files}, indent=1), encoding="utf-8")
        env[ENV_SITES] = str(target)
    return env


class Records(list):
    """The records, sorted by rank then pid; `problems` names the files that could not be read."""

    def __init__(self, records=(), problems=()):
        super().__init__(records)
        self.problems: List[str] = list(problems)


def _int_keys(mapping):
    if not isinstance(mapping, dict):
        return mapping
    out = {}
    for path, lines in mapping.items():
        if isinstance(lines, dict):
            out[path] = {(int(k) if str(k).isdigit() else k): v for k, v in lines.items()}
        else:
            out[path] = lines
    return out


def read_records(out_dir: Path) -> Records:
    """Every process record in out_dir. A file that does not read as a record is skipped and
    named in the result's `problems`."""
    found, problems = [], []
    folder = Path(out_dir)
    for path in sorted(folder.glob(f"{_names.RECORD_PREFIX}*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            problems.append(f"{path.name}: not readable: {exc}")
            continue
        if not isinstance(data, dict) or data.get("schema") != RECORD_SCHEMA:
            problems.append(f"{path.name}: not a {RECORD_SCHEMA} record")
            continue
        data["sites"] = _int_keys(data.get("sites"))
        data["site_details"] = _int_keys(data.get("site_details"))
        found.append(data)
    found.sort(key=lambda r: (r.get("rank") if isinstance(r.get("rank"), int) else 0,
                              r.get("pid") if isinstance(r.get("pid"), int) else 0))
    return Records(found, problems)


def progress(out_dir: Path) -> tuple[int, float]:
    """(highest step count any process reported, time.time() of the latest report); (0, 0.0)
    before any report. Each training process rewrites its progress file at most every 0.5 s."""
    best, latest = 0, 0.0
    for path in Path(out_dir).glob(f"{_names.PROGRESS_PREFIX}*.txt"):
        try:
            fields = path.read_text(encoding="ascii").split()
            steps, when = int(fields[0]), float(fields[2])
        except (OSError, UnicodeDecodeError, ValueError, IndexError):
            continue
        best = max(best, steps)
        latest = max(latest, when)
    return best, latest
