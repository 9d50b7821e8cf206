"""Running the command projects of tests/fixtures/command_projects under the harness."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional

PROJECTS = Path(__file__).resolve().parents[1] / "fixtures" / "command_projects"
TIMEOUT = 240  # seconds per command (a torch import alone takes seconds on a loaded machine)


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    records: list
    out: Path
    seconds: float
    own: Dict[str, List[dict]] = field(default_factory=dict)  # loss-log suffix -> entries

    def own_losses(self, suffix: str = "") -> List[float]:
        return [entry["loss"] for entry in self.own.get(suffix, [])]

    def explain(self) -> str:
        return (f"exit {self.returncode}\n--- stdout\n{self.stdout[-3000:]}\n--- stderr\n"
                f"{self.stderr[-3000:]}\n--- problems {getattr(self.records, 'problems', None)}")


def run_command(cmd: List[str], cwd: Path, out: Path, *, steps: int, seed: Optional[int] = 0,
                threads: Optional[int] = 1, sites=None, env_extra=None, base=None) -> Run:
    from ascend_migrate.validate.harness import harness_env, read_records

    shutil.rmtree(out, ignore_errors=True)
    env = harness_env(out / "records", steps=steps, seed=seed, threads=threads, sites=sites,
                      base=base)
    log = out / "losses.jsonl"
    env["FIXTURE_LOSSES"] = str(log)
    env.update(env_extra or {})
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    seconds = time.monotonic() - start
    own = {}
    for path in sorted(out.glob("losses.jsonl*")):
        suffix = path.name[len("losses.jsonl"):]
        own[suffix] = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return Run(proc.returncode, proc.stdout, proc.stderr, read_records(out / "records"), out,
               seconds, own)


def run_together(calls: Dict[str, Callable[[], Run]]) -> Dict[str, Run]:
    """Each call's Run, two at a time: a command spends most of its time alone on one core
    (importing torch), so on a 2-core machine a module's commands take about half as long
    side by side as in a row. Every command still runs, in its own folders."""
    workers = max(1, min(2, os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {name: pool.submit(call) for name, call in calls.items()}
        return {name: future.result() for name, future in futures.items()}


def copy_project(name: str, dest: Path) -> Path:
    """A private copy, so edit-site paths and written files never touch the checkout."""
    target = dest / name
    shutil.copytree(PROJECTS / name, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def oldest_python() -> Optional[str]:
    """A Python 3.9 interpreter, when this machine has one."""
    candidates = [os.environ.get("PYTHON_OLDEST", "")]
    candidates += sorted(str(p) for p in Path.home().glob(".pyenv/versions/3.9*/bin/python3.9"))
    found = shutil.which("python3.9")
    if found:
        candidates.append(found)
    for candidate in candidates:
        if not candidate or not Path(candidate).exists():
            continue
        try:
            proc = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2])"],
                                  capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if proc.returncode == 0 and proc.stdout.strip() == "(3, 9)":
            return candidate
    return None


def torchrun_command() -> List[str]:
    exe = Path(sys.executable).parent / "torchrun"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "torch.distributed.run"]
