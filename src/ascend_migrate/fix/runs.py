"""Per-run change lists: every `migrate --write` / `--output` run keeps its own list.

    TREE/.ascend-migrate/runs/<UTC time>/changes.json (+ .csv)   one folder per run
    TREE/.ascend-migrate/last-changes.json                       the last run that changed files
    TREE/.ascend-migrate/stale-<UTC time>/                       validation state of an earlier
                                                                 port, set aside by --output --force

A run that changes nothing is recorded in its own folder but never moves the pointer, so the
change list of the run that did the work stays retrievable (`last_change_list(TREE)`). Each
run's list also records the flags that reproduce it (`run.options`) and where it came from.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import Optional

from ascend_migrate.fix.result import MigrationResult, write_atomic, write_change_list

RUNS_DIR = Path(".ascend-migrate") / "runs"
LAST_RUN_POINTER = Path(".ascend-migrate") / "last-changes.json"
POINTER_SCHEMA = "ascend-migrate/last-changes/1"


STALE_PREFIX = "stale-"
KEPT_RECORDS = ("runs", "last-changes.json")  # run history: each run is stamped, it never goes stale


def set_aside_state(target_base: Path) -> tuple[Optional[Path], list[tuple[Path, Path]]]:
    """Move an earlier port's validation state (report, confirmations, anything but the run
    history) into `.ascend-migrate/stale-<UTC time>/`, so it can never be read as the state of
    the tree written now. Nothing is deleted. Returns the folder and the moves (for `restore`)."""
    state = Path(target_base) / ".ascend-migrate"
    if state.is_symlink() or not state.is_dir():
        return None, []
    names = sorted(n for n in os.listdir(state) if n not in KEPT_RECORDS and not n.startswith(STALE_PREFIX))
    if not names:
        return None, []
    stale = state / f"{STALE_PREFIX}{_stamp()}"
    stale.mkdir()
    moves: list[tuple[Path, Path]] = []
    try:
        for name in names:
            os.replace(state / name, stale / name)
            moves.append((state / name, stale / name))
    except OSError:
        restore_state(stale, moves)
        raise
    return stale, moves


def restore_state(stale: Optional[Path], moves: list[tuple[Path, Path]]) -> None:
    """Undo `set_aside_state` (the write it made way for failed)."""
    for original, moved in reversed(moves):
        os.replace(moved, original)
    if stale is not None:
        try:
            stale.rmdir()
        except OSError:
            pass


def _stamp() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")


def record_run(result: MigrationResult, base: Path, target_base: Path, output: Optional[Path]) -> Path:
    """Write this run's change list into its own folder; move the pointer when files changed."""
    from ascend_migrate.safe_paths import state_path

    runs = state_path(target_base, "runs", "x").parent  # refuses a linked .ascend-migrate or runs/
    stamp = _stamp()
    run_dir, n = runs / stamp, 1
    while run_dir.exists():
        run_dir, n = runs / f"{stamp}-{n}", n + 1
    run_dir.mkdir(parents=True)  # a fresh folder of our own: nothing in it can be a link
    result.run_dir = run_dir
    result.run_record = {
        "source": str(Path(base).resolve()), "target": str(Path(target_base).resolve()),
        "mode": "output" if output is not None else "write", "options": dict(result.options),
        "files_written": list(result.written),
    }
    write_change_list(result, run_dir / "changes")
    if result.written or output is not None:  # --output made a whole new tree
        pointer = {"schema": POINTER_SCHEMA, "run": run_dir.name,
                   "changes": (RUNS_DIR / run_dir.name / "changes.json").as_posix()}
        write_atomic(target_base / LAST_RUN_POINTER, (json.dumps(pointer, indent=2) + "\n").encode("utf-8"))
    return run_dir


def last_change_list(tree: Path) -> Optional[Path]:
    """The change list of the last run that changed files in `tree` (None when there is none)."""
    from ascend_migrate.safe_paths import UnsafePathError, inside

    tree = Path(tree)
    try:  # the pointer and the list it names are read only from real folders inside the tree
        pointer = inside(tree, LAST_RUN_POINTER.as_posix(), "run pointer", state_ok=True)
        data = json.loads(pointer.read_text(encoding="utf-8"))
        path = inside(tree, data["changes"], "change list", state_ok=True)
    except (OSError, ValueError, KeyError, TypeError, UnsafePathError):
        return None
    return path if path.is_file() else None


def read_change_list(path: Optional[Path]) -> Optional[dict]:
    """A change list's JSON object, or None when there is none or it is not readable."""
    if path is None:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def run_record(tree: Path) -> Optional[dict]:
    """The `run` section (flags, source, target) of the last run that changed files."""
    data = read_change_list(last_change_list(tree))
    run = data.get("run") if data is not None else None
    return run if isinstance(run, dict) else None


def is_run_output(base: Path, rel: str) -> bool:
    """Files under .ascend-migrate/ are this tool's records, never migration inputs."""
    return rel == ".ascend-migrate" or rel.startswith(".ascend-migrate/")
