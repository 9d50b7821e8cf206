"""`scan --format csv` on a terminal: file names and snippets with control characters are
shown escaped, one row per line.

The CSV report went to a terminal as it goes to a file, so a file named with an OSC 52
sequence wrote the clipboard and a line break in a name started a row of its own. On a
terminal every cell now passes through `printable`; a file (`-o`) or a pipe still gets the
cells as they are, which is what a spreadsheet or a script reading the CSV wants.
"""
from __future__ import annotations

import csv
import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, run_cli

OSC52 = "\x1b]52;c;ZWNobyBjc3Y=\x07"
CSI = "\x1b[2J"
RAW = ("\x1b", "\x07", "\x9b")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    (root / f"run{OSC52}\nforged.sh").write_text("export CUDA_VISIBLE_DEVICES=0\n")
    (root / f"m{CSI}\x9b31m.py").write_text("import torch\nx = torch.zeros(1).cuda()\n")
    return root


def _on_a_terminal(*args: str) -> str:
    controller, terminal = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "ascend_migrate", *args], stdout=terminal,
                            stderr=subprocess.DEVNULL, env=env)
    os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=120)
    os.close(controller)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def test_csv_cells_on_a_terminal_are_escaped(tree: Path) -> None:
    shown = _on_a_terminal("scan", str(tree), "--no-cache", "--format", "csv")
    for ch in RAW:
        assert ch not in shown, (ch, shown[:2000])
    rows = list(csv.reader(io.StringIO(shown)))
    assert rows[0][0] == "path" and len(rows) >= 3, shown
    assert not any(row and row[0].startswith("forged.sh") for row in rows), shown
    assert any("\\x1b]52;c;" in row[0] and "\\nforged.sh" in row[0] for row in rows[1:]), shown
    assert any("\\x1b[2J\\x9b31m" in row[0] for row in rows[1:]), shown


def test_csv_to_a_file_keeps_the_cells(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.csv"
    proc = run_cli("scan", str(tree), "--no-cache", "--format", "csv", "-o", str(out))
    assert proc.returncode in (0, 1), proc.stderr
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"), newline="")))
    assert any(row[0] == f"run{OSC52}\nforged.sh" for row in rows[1:]), rows
