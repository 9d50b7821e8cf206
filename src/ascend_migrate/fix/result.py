"""What a migration run produced, and its change list on disk.

The floor under both `migrate` (which plans and writes a run) and `runs` (which records each
run in its own folder): the result types, the change list as JSON and CSV, and the atomic
write they both use. Nothing here plans or rewrites a file, and importing it does not import
the scanner (`validate` and `skill` read run records through `runs`).
"""
from __future__ import annotations

import csv
import difflib
import io
import json
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ascend_migrate.fix.commit import Transaction
from ascend_migrate.printable import printable
from ascend_migrate.scan.walk import display

if TYPE_CHECKING:  # pragma: no cover
    from ascend_migrate.fix.rewrite import Change


@dataclass
class FileOutcome:
    path: str
    original: bytes
    new: Optional[bytes] = None  # None: unchanged or not rewritten
    changes: list[Change] = field(default_factory=list)
    manual: list[Change] = field(default_factory=list)
    error: str = ""
    internal: bool = False  # the error is a bug in this tool, not a property of the file


@dataclass
class MigrationResult:
    root: Path
    style: str
    files: list[FileOutcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    options: dict = field(default_factory=dict)  # the flags that reproduce this run (fix/runs.py)
    run_dir: Optional[Path] = None
    run_record: Optional[dict] = None

    @property
    def changes(self) -> list[Change]:
        return [c for f in self.files for c in f.changes]

    @property
    def manual(self) -> list[Change]:
        return [c for f in self.files for c in f.manual]

    @property
    def errors(self) -> list[FileOutcome]:
        return [f for f in self.files if f.error]

    @property
    def internal_errors(self) -> list[FileOutcome]:
        return [f for f in self.files if f.internal]

    def diff(self) -> str:
        out = io.StringIO()
        for f in self.files:
            if f.new is None:
                continue
            a = f.original.decode("utf-8", errors="replace").splitlines(keepends=True)
            b = f.new.decode("utf-8", errors="replace").splitlines(keepends=True)
            name = printable(f.path)  # a line break or escape in a name would forge diff lines
            for line in difflib.unified_diff(a, b, f"a/{name}", f"b/{name}"):
                out.write(line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n")
        return out.getvalue()

    def change_rows(self) -> list[dict]:
        rows = [c.to_dict() for c in self.changes] + [c.to_dict() for c in self.manual]
        return sorted(rows, key=lambda r: (r["file"], r["start_line"], r["operation"] == "manual", r["rule"]))


def write_atomic(path: Path, data: bytes, mode: Optional[int] = None) -> None:
    """Write via a temporary file in the same directory, then rename over the target."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if mode is not None:
            os.chmod(tmp, stat.S_IMODE(mode))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def change_paths(path: Path) -> tuple[Path, Path]:
    """PATH.json and PATH.csv (a PATH ending in .json or .csv names the pair as well)."""
    stem = path.with_suffix("") if path.suffix in (".json", ".csv") else path
    return stem.with_suffix(".json"), stem.with_suffix(".csv")


def change_list_bytes(result: MigrationResult) -> tuple[bytes, bytes]:
    """The change list as JSON and CSV (file, start line, end line, rule, operation, message)."""
    # imported here: the report package brings the scanner, which reading run records never needs
    from ascend_migrate.report.csv_report import spreadsheet_cell

    rows = [{k: display(v) if isinstance(v, str) else v for k, v in r.items()} for r in result.change_rows()]
    payload = {"schema": "ascend-migrate/changes/1", "style": result.style, "changes": rows,
               "errors": [{"file": display(f.path), "error": display(f.error)} for f in result.errors],
               "notes": [display(n) for n in result.notes], "options": result.options, "run": result.run_record}
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["file", "start_line", "end_line", "rule", "operation", "message", "safety", "new_line"])
    for r in rows:
        writer.writerow([spreadsheet_cell(v) for v in (r["file"], r["start_line"], r["end_line"], r["rule"],
                                                       r["operation"], r["message"], r["safety"], r["new_line"] or "")])
    return (json.dumps(payload, indent=2) + "\n").encode("utf-8"), buf.getvalue().encode("utf-8")


def write_change_list(result: MigrationResult, path: Path) -> tuple[Path, Path]:
    """Write PATH.json and PATH.csv together (both or neither)."""
    json_path, csv_path = change_paths(path)
    json_data, csv_data = change_list_bytes(result)
    txn = Transaction()
    try:
        txn.stage_bytes(json_path, json_data)
        txn.stage_bytes(csv_path, csv_data)
        txn.commit()
    except BaseException:
        txn.abort()
        raise
    return json_path, csv_path
