"""Public scanning API used by the CLI, the migrator, the validator and the skill generator.

The types a scan returns live a floor below (`scan.result`), so the engine that builds them
does not import this module back."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from ascend_migrate.scan.result import EntryPoint, FileNote, ScanResult

__all__ = ["EntryPoint", "FileNote", "ScanResult", "scan"]


def scan(
    root: Path | str,
    *,
    select: Optional[Iterable[str]] = None,
    ignore: Optional[Iterable[str]] = None,
    jobs: Optional[int] = None,
    use_cache: bool = True,
    torch_npu_version: Optional[str] = None,
    progress: Optional[Callable[[int, int], Any]] = None,
    entry: Iterable[str] = (),
    no_entry: Iterable[str] = (),
    exclude: Iterable[str] = (),
) -> ScanResult:
    """Scan a file or a directory tree statically (nothing in it is imported or run).
    `exclude` adds path patterns to those of the project's [tool.ascend-migrate] config."""
    from ascend_migrate.scan.engine import run_scan

    return run_scan(
        Path(root),
        select=select,
        ignore=ignore,
        jobs=jobs,
        use_cache=use_cache,
        torch_npu_version=torch_npu_version,
        progress=progress,
        entry=entry,
        no_entry=no_entry,
        exclude=tuple(exclude),
    )
