"""A notebook saved with a UTF-8 byte order mark is a notebook: scanned and migrated, BOM kept.

Some editors on Windows write one; it used to make the notebook "not readable", so its CUDA
calls were neither reported nor ported.
"""
from __future__ import annotations

import json
from pathlib import Path

from .conftest import run_cli

BOM = b"\xef\xbb\xbf"


def _notebook(path: Path) -> None:
    nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": ["import torch\n", "x = torch.zeros(1).cuda()\n", "torch.cuda.synchronize()\n"]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_bytes(BOM + (json.dumps(nb, indent=1) + "\n").encode("utf-8"))


def test_scan_reads_a_notebook_with_a_bom(tmp_path: Path) -> None:
    tree = tmp_path / "t"
    tree.mkdir()
    _notebook(tree / "train.ipynb")
    proc = run_cli("scan", str(tree), "--format", "json", "--no-cache")
    report = json.loads(proc.stdout)
    assert [f for f in report["findings"] if f["path"] == "train.ipynb"], report
    assert "not a readable notebook" not in proc.stdout


def test_migrate_rewrites_a_notebook_with_a_bom_and_keeps_it(tmp_path: Path) -> None:
    tree = tmp_path / "t"
    tree.mkdir()
    _notebook(tree / "train.ipynb")
    out = tmp_path / "out"
    proc = run_cli("migrate", str(tree), "--output", str(out), "--style", "agnostic")
    assert proc.returncode in (0, 1), proc.stderr
    data = (out / "train.ipynb").read_bytes()
    assert data.startswith(BOM) and not data.startswith(BOM * 2)
    nb = json.loads(data[len(BOM):])
    source = "".join(nb["cells"][0]["source"])
    assert ".cuda()" not in source, source
