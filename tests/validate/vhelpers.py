"""Helpers shared by the validation tests."""
from __future__ import annotations

import textwrap
from pathlib import Path

from ascend_migrate.scan.api import EntryPoint, ScanResult
from ascend_migrate.scan.finding import Finding

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "validate"
TINY = FIXTURES / "tiny"


def finding(rule: str, path: str, line: int, col: int = 0, severity: str = "warning",
            symbol: str = "", message: str = "") -> Finding:
    return Finding(rule=rule, path=path, line=line, col=col, end_line=line, end_col=col + 1,
                   message=message or f"{rule} finding", severity=severity, symbol=symbol)


def entry(path: str, line: int = 1, transfer: bool = False) -> EntryPoint:
    return EntryPoint(path=path, line=line, kind="main-guard", has_transfer_import=transfer,
                      imports_torch_npu=transfer)


def make_scan(root: Path, findings=(), entry_points=()) -> ScanResult:
    return ScanResult(root=str(root), findings=list(findings), entry_points=list(entry_points))


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


