"""`validate run .` inside a tree that ships modules named like ours: none of them is executed."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ascend_migrate.validate.environment import collect_environment

from .conftest import ROOT

PLANT = 'open({marker!r}, "w").write("ran")\n'


def _plant(tree: Path, marker: Path) -> None:
    for rel in ("ascend_migrate/__init__.py", "ascend_migrate/__main__.py", "ascend_migrate/cli.py"):
        path = tree / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(PLANT.format(marker=str(marker)))


def test_host_check_does_not_import_the_trees_package(project: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "PWNED"
    _plant(project, marker)
    monkeypatch.chdir(project)  # `validate run .` from inside the tree
    data = collect_environment("cpu")
    assert not marker.exists()
    assert "error" not in data and data.get("device")


def test_validate_run_from_inside_the_tree_via_the_script(project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    _plant(project, marker)
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "run_validation.py"), ".", "--no-ddp",
                           "--format", "json"], cwd=project, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    assert not marker.exists()
    assert '"environment"' in proc.stdout
