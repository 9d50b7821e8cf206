"""Which of the project's files a validation run executed, and which of them the migration changed.

A golden comparison proves something about a port only if the entry ran the code that was
ported. An entry that imports the model package while the migration changed only the training
script passes while executing none of the migrated code. This module records which project
files had code executed during the entry run, so the report can say which changed files the run
went through.

The record is per file and costs nothing measurable: every module imported during the run ran
its top level, so the modules that appeared in `sys.modules` with a file under the project root
are the files it executed. On Python 3.12+ `sys.monitoring` adds files whose code ran without an
import (`exec`, `runpy`); each code object is reported once and then switched off. A global
`sys.settrace` hook would see the same files at file level for the price of a Python call on
every function call of the run, so it is not used. Code run in other processes
(DataLoader workers, the DDP smoke run) is not seen.
"""
from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any, Iterator, Optional

_TOOL_NAME = "ascend-migrate-executed"


class ExecutedFiles:
    """The set of source files under `root` whose code ran while recording."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self._filenames: set[str] = set()
        self.method = "imports"

    def note(self, filename: str) -> None:
        self._filenames.add(filename)

    def files(self) -> list[str]:
        """Paths relative to the root (posix), sorted; files outside the root are left out."""
        out: set[str] = set()
        for name in self._filenames:
            if not name or name.startswith("<"):
                continue
            try:
                rel = Path(name).resolve().relative_to(self.root)
            except (OSError, ValueError):
                continue
            out.add(rel.as_posix())
        return sorted(out)


@contextlib.contextmanager
def record_executed(root: Path) -> Iterator[ExecutedFiles]:
    """Record the project files whose code runs inside the block (this process only)."""
    seen = ExecutedFiles(root)
    before = {name: id(mod) for name, mod in list(sys.modules.items())}
    monitoring = getattr(sys, "monitoring", None)
    watch = _by_monitoring(monitoring, seen) if monitoring is not None and _monitoring_free(monitoring) \
        else contextlib.nullcontext()
    try:
        with watch:
            yield seen
    finally:
        for name, mod in list(sys.modules.items()):
            if before.get(name) == id(mod):
                continue  # imported before the run: its top level did not run now
            where = getattr(mod, "__file__", None)
            if isinstance(where, str):
                seen.note(where)


def _monitoring_free(monitoring: Any) -> bool:
    return monitoring.get_tool(monitoring.PROFILER_ID) is None


@contextlib.contextmanager
def _by_monitoring(monitoring: Any, seen: ExecutedFiles) -> Iterator[None]:
    tool = monitoring.PROFILER_ID
    event = monitoring.events.PY_START

    def on_start(code: Any, offset: int) -> Any:
        seen.note(code.co_filename)
        return monitoring.DISABLE  # this code object is known now: never report it again

    monitoring.use_tool_id(tool, _TOOL_NAME)
    seen.method = "imports + sys.monitoring"
    try:
        monitoring.register_callback(tool, event, on_start)
        monitoring.set_events(tool, event)
        yield
    finally:
        monitoring.set_events(tool, 0)
        monitoring.register_callback(tool, event, None)
        monitoring.free_tool_id(tool)
        monitoring.restart_events()  # code disabled above reports again to the next recording


# --- what the migration changed ---------------------------------------------------------------

ROOT_CHANGE_LIST = "ascend-migrate-changes.json"


def change_list_path(root: Path) -> Optional[Path]:
    """The change list of the last migration that changed this tree: the run history's pointer
    first (it survives deleting the root copy before hand-over), else the root copy."""
    from ascend_migrate.fix.runs import last_change_list

    found = last_change_list(Path(root))
    if found is not None:
        return found
    candidate = Path(root) / ROOT_CHANGE_LIST
    return candidate if candidate.is_file() and not candidate.is_symlink() else None


def changed_files(root: Path) -> Optional[tuple[Path, list[str]]]:
    """(change list, files it names: edits and manual items), or None without a readable list."""
    from ascend_migrate.fix.runs import read_change_list

    path = change_list_path(root)
    data = read_change_list(path)
    rows = data.get("changes") if data is not None else None
    if not isinstance(rows, list):
        return None
    files = sorted({str(r["file"]) for r in rows if isinstance(r, dict) and r.get("file")})
    return path, files
