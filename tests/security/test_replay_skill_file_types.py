"""Files read from a shared skill folder are regular files, checked before the replay starts.

A named pipe in place of the stored entry file or of manual.patch blocked the replay for ever
(nothing writes into it); a folder or a pipe named in `binary_files` failed with an internal
error after the migration had already rewritten TARGET. Every file the skill names is looked at
(without opening it) before anything is written: a non-regular one is refused with exit 2 and
the field, and TARGET stays as it was.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from .replay_skill import make_skill, new_file_patch, replay_refused

ENTRY = b"def entry():\n    return 1\n"


def _pipe(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)


def test_entry_file_that_is_a_pipe_is_refused_without_blocking(tmp_path: Path, project: Path) -> None:
    skill = make_skill(tmp_path / "skill", entry={"unported_file": "entry/e.py", "path": "val_entry.py"})
    _pipe(skill / "entry" / "e.py")
    replay_refused(skill, project, "entry.unported_file", "named pipe", timeout=30)


def test_manual_patch_that_is_a_pipe_is_refused_without_blocking(tmp_path: Path, project: Path) -> None:
    skill = make_skill(tmp_path / "skill", patch=new_file_patch("pkg/added.py"))
    (skill / "manual.patch").unlink()
    _pipe(skill / "manual.patch")
    replay_refused(skill, project, "manual_patch.file", timeout=30)


def test_replay_record_that_is_a_pipe_is_refused_without_blocking(tmp_path: Path, project: Path) -> None:
    skill = make_skill(tmp_path / "skill")
    (skill / "replay.json").unlink()
    _pipe(skill / "replay.json")
    replay_refused(skill, project, "replay.json", timeout=30)


@pytest.mark.parametrize("kind", ["pipe", "folder"])
def test_binary_source_that_is_not_a_regular_file_is_refused_before_migrating(tmp_path: Path, project: Path,
                                                                             kind: str) -> None:
    skill = make_skill(tmp_path / "skill", binary=("files/assets/w.bin",))
    if kind == "pipe":
        _pipe(skill / "files" / "assets" / "w.bin")
    else:
        (skill / "files" / "assets" / "w.bin").mkdir(parents=True)
    replay_refused(skill, project, "manual_patch.binary_files", timeout=30)


def test_binary_destination_that_is_a_folder_is_refused_before_migrating(tmp_path: Path, project: Path) -> None:
    skill = make_skill(tmp_path / "skill", files={"files/pkg": b"\0"}, binary=("files/pkg",))
    replay_refused(skill, project, "manual_patch.binary_files", "folder")


@pytest.mark.parametrize("field, rel", [("golden", "golden/g.pt"), ("validation", "thresholds.yaml")])
def test_golden_and_thresholds_that_are_pipes_are_refused(tmp_path: Path, project: Path, field: str, rel: str) -> None:
    record = ({"golden": {"file": rel}} if field == "golden" else {"validation": {"thresholds_file": rel}})
    skill = make_skill(tmp_path / "skill", record=record)
    _pipe(skill / rel)
    replay_refused(skill, project, "golden.file" if field == "golden" else "validation.thresholds_file", timeout=30)


def test_binary_source_linked_to_outside_the_skill_is_refused(tmp_path: Path, project: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("not the skill's\n")
    skill = make_skill(tmp_path / "skill", binary=("files/copy.txt",))
    (skill / "files").mkdir(exist_ok=True)
    os.symlink(secret, skill / "files" / "copy.txt")
    replay_refused(skill, project, "manual_patch.binary_files", "symbolic link")
