"""CSV reports opened in a spreadsheet: a cell from a tree never starts a formula.

A file named `=HYPERLINK("http://...","open me").py` (or a message, symbol or rule text from the
tree starting with `+`, `-`, `@`, a tab or a CR) would be evaluated by Excel, LibreOffice or
Sheets when the report is opened. Such cells get a leading apostrophe, the escape those tools
read as "text"; numbers stay numbers.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from ascend_migrate.report.csv_report import spreadsheet_cell

from .conftest import make_project, run_cli

CUDA = "import torch\ntorch.cuda.synchronize()\nx = torch.zeros(1).cuda()\n"


@pytest.mark.parametrize("text", ["=1+1", "+1", "-2", "@SUM(A1)", "\tx", "\rx", '=HYPERLINK("http://x","y")'])
def test_formula_starts_are_escaped(text: str) -> None:
    assert spreadsheet_cell(text) == "'" + text


@pytest.mark.parametrize("value", ["a.py", "", "torch.cuda", 3, None, "pkg/=x.py"])
def test_other_cells_are_unchanged(value: object) -> None:
    assert spreadsheet_cell(value) == value


def test_scan_csv_escapes_a_formula_file_name(tmp_path: Path) -> None:
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / '=HYPERLINK("http:__x","y").py').write_text(CUDA)
    (tree / "+cmd.py").write_text(CUDA)
    proc = run_cli("scan", str(tree), "--format", "csv", "--no-cache")
    rows = list(csv.reader(io.StringIO(proc.stdout)))
    paths = {row[0] for row in rows[1:]}
    assert paths and all(not p.startswith(("=", "+", "-", "@", "\t", "\r")) for p in paths), paths
    assert "'+cmd.py" in paths
    assert all(cell[:1] not in "=+-@\t\r" or cell.lstrip("-").isdigit() for row in rows for cell in row)


def test_change_list_csv_escapes_a_formula_file_name(tmp_path: Path) -> None:
    tree = make_project(tmp_path / "t")
    (tree / "@run.py").write_text(CUDA)
    out = tmp_path / "out"
    proc = run_cli("migrate", str(tree), "--output", str(out), "--style", "agnostic")
    assert proc.returncode in (0, 1), proc.stderr
    rows = list(csv.reader(io.StringIO((out / "ascend-migrate-changes.csv").read_text())))
    files = {row[0] for row in rows[1:]}
    assert "'@run.py" in files and "@run.py" not in files
