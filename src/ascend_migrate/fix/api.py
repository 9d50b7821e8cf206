"""Public migration API: `migrate(src, style=..., output=...)`."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Optional

from ascend_migrate.fix.migrate import MigrationResult, apply, plan
from ascend_migrate.fix.rewrite import Options


def migrate(src: Path | str, *, style: str = "transfer", output: Optional[Path | str] = None, write: bool = False,
            force: bool = False, annotate: bool = False, min_torch: str = "2.6", safe_only: bool = False,
            torch_npu_version: Optional[str] = None, inject_init: bool = False,
            changes_path: Optional[Path | str] = None, entry: Iterable[str] = (),
            no_entry: Iterable[str] = (), exclude: Iterable[str] = (),
            progress: Optional[Callable[[str, int, int], None]] = None) -> MigrationResult:
    """Plan and (with write/output) apply a migration. Without either it is a dry run.

    `progress(phase, done, total)` reports the scan and the rewrite as they go.
    """
    opts = Options(style=style, min_torch=min_torch, annotate=annotate, safe_only=safe_only)
    result = plan(Path(src), opts, torch_npu_version=torch_npu_version, inject_init=inject_init,
                  entry=entry, no_entry=no_entry, exclude=exclude, progress=progress)
    apply(result, write=write, output=Path(output) if output else None, force=force,
          changes_path=Path(changes_path) if changes_path else None)
    return result
