"""A shared skill may write only files the tree hash counts.

The tree hash leaves out what running or installing a project writes (`__pycache__/`, `*.pyc`,
`*.egg-info/`) and folders the walker skips for what they hold (a virtual environment with its
`pyvenv.cfg`, a conda environment, a folder tagged as a cache). A file the skill put there would
never show up in the comparison, so a replay could report "tree reproduced" while planted
bytecode ran on the next import. Each such path is refused before anything is written, and one
the skill makes skipped by writing the marker itself is refused as well.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import run_cli
from .replay_skill import make_skill, new_file_patch, replay_refused

BYTECODE = b"\x6f\x0d\x0d\x0a" + b"\0" * 12 + b"planted bytecode"


@pytest.mark.parametrize("rel", [
    "files/pkg/__pycache__/utils.cpython-311.pyc",
    "files/pkg/utils.pyc",
    "files/pkg/helpers.pyo",
    "files/proj.egg-info/entry_points.txt",
])
def test_binary_files_into_runtime_outputs_are_refused(tmp_path: Path, project: Path, rel: str) -> None:
    skill = make_skill(tmp_path / "skill", files={rel: BYTECODE}, binary=(rel,))
    replay_refused(skill, project, "manual_patch.binary_files", "tree hash")


@pytest.mark.parametrize("marker", ["pyvenv.cfg", "conda-meta/history", "CACHEDIR.TAG"])
def test_binary_files_into_an_existing_environment_or_cache_are_refused(tmp_path: Path, project: Path,
                                                                        marker: str) -> None:
    (project / "env_here" / marker).parent.mkdir(parents=True, exist_ok=True)
    (project / "env_here" / marker).write_text("home = /usr/bin\n")
    rel = "files/env_here/bin/pip"
    skill = make_skill(tmp_path / "skill", files={rel: b"#!/bin/sh\necho planted\n"}, binary=(rel,))
    replay_refused(skill, project, "manual_patch.binary_files", "env_here")


def test_a_skill_cannot_make_a_folder_skipped_by_writing_its_marker(tmp_path: Path, project: Path) -> None:
    files = {"files/tools/pyvenv.cfg": b"home = /usr/bin\n", "files/tools/bin/pip": b"#!/bin/sh\necho planted\n"}
    skill = make_skill(tmp_path / "skill", files=files, binary=tuple(files))
    replay_refused(skill, project, "manual_patch.binary_files", "virtual environment")


@pytest.mark.parametrize("rel", ["pkg/__pycache__/shim.py", "pkg/shim.pyc", "tool.egg-info/top_level.txt"])
def test_manual_patch_into_runtime_outputs_is_refused(tmp_path: Path, project: Path, rel: str) -> None:
    skill = make_skill(tmp_path / "skill", patch=new_file_patch(rel))
    replay_refused(skill, project, "path in manual.patch", "tree hash")


def test_entry_file_into_a_cache_folder_is_refused(tmp_path: Path, project: Path) -> None:
    skill = make_skill(tmp_path / "skill", files={"entry/unported/e.py": b"def entry():\n    return 1\n"},
                       entry={"unported_file": "entry/unported/e.py", "path": "pkg/__pycache__/e.py"})
    replay_refused(skill, project, "entry.path")


def test_ordinary_files_are_still_written(tmp_path: Path, project: Path) -> None:
    """The refusal is about where a file goes: a new module and a binary asset replay as before
    (the tree hash then differs from the made-up one in this skill: exit 1, both files there)."""
    skill = make_skill(tmp_path / "skill", patch=new_file_patch("pkg/extra.py"),
                       files={"files/assets/w.bin": b"\0\1"}, binary=("files/assets/w.bin",))
    proc = run_cli("replay", str(skill), str(project))
    assert proc.returncode == 1, proc.stderr
    assert (project / "pkg" / "extra.py").read_text() == "VALUE = 1\n"
    assert (project / "assets" / "w.bin").read_bytes() == b"\0\1"
    assert "patch: pkg/extra.py" in proc.stdout + proc.stderr
