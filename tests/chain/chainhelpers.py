"""Helpers for the end-to-end chain tests: scan -> migrate -> manual edit -> validate -> skill -> replay."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from ascend_migrate.cli import cli

REPO = Path(__file__).resolve().parents[2]


def am(*args, env=None):
    """Run `ascend-migrate ARGS` in-process; return the click result."""
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False, env=env)


def copy_project(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__", ".ascend-migrate", "*.pyc"))
    return dest


def copy_validated(validated: Path, dest: Path) -> tuple[Path, Path, Path]:
    """A copy of the `validated_example` fixture's folder (its validation state included):
    (original, ported, golden). The port's run record still names the shared original as its
    source, which holds the same files."""
    shutil.copytree(validated, dest, symlinks=True)
    return dest / "unported-checkout", dest / "ported", dest / "golden.pt"


def replace_once(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path.name}: expected exactly one {old!r}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def load_report(tree: Path) -> dict:
    return json.loads((tree / ".ascend-migrate" / "validation-report.json").read_text(encoding="utf-8"))
