"""Shared by the stored-report and report-ledger tests: a scan through the CLI in this process,
and reports compared without their scan time (the one part two scans of a tree may differ in)."""
from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.scan import report_snapshot as snapshots


def isolate(tmp_path: Path, monkeypatch) -> None:
    """A private cache folder, and the test's just-written files counted as settled."""
    monkeypatch.setenv("ASCEND_MIGRATE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(snapshots, "RACY_NS", 0)


def scan_cli(root: Path, *args: str) -> tuple[int, str]:
    """`ascend-migrate scan ROOT --fail-on never ARGS`: exit code and stdout."""
    res = CliRunner().invoke(cli, ["scan", str(root), "--fail-on", "never", *args])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.output
    return res.exit_code, res.stdout


def without_time(fmt: str, text: str) -> str:
    if fmt == "json":
        return re.sub(r'"duration_s": [0-9.e+-]+', '"duration_s": T', text)
    return re.sub(r"in [0-9.]+ s", "in T s", text)
