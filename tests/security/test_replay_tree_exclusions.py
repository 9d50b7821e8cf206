"""A shared skill cannot widen what the tree comparison ignores, nor hide what its patch touches.

`tree.excluded` in replay.json is the list of files left out of the tree hash: at validation
time, the files the run itself wrote (logs, the golden file). Taken as glob patterns, `["*"]`
with the hash of an empty listing made every tree "reproduced". Only literal names of files a
run could write are accepted: no patterns, no folders, no source files, nothing the skill itself
writes. And the files the replay names while applying manual.patch are the ones parsed from
the patch, which must be the ones `manual_patch.files` lists.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ascend_migrate.replay import ReplayError, check_record_paths

from .conftest import run_cli
from .replay_skill import make_skill, new_file_patch, replay_refused

EMPTY = hashlib.sha256(b"").hexdigest()


@pytest.mark.parametrize("excluded", [["*"], ["**"], ["pkg/*"], ["*.py"], ["[a-z]*"], ["?rain.py"]])
def test_pattern_exclusions_are_refused(tmp_path: Path, project: Path, excluded: list) -> None:
    skill = make_skill(tmp_path / "skill", tree={"sha256": EMPTY, "excluded": excluded, "manifest": {}})
    replay_refused(skill, project, "tree.excluded", "pattern")


@pytest.mark.parametrize("excluded", [["train.py"], ["pkg/utils.py"], ["run.sh"], ["requirements.txt"], ["pkg"],
                                      ["pkg/"]])
def test_exclusions_of_source_files_or_folders_are_refused(tmp_path: Path, project: Path, excluded: list) -> None:
    skill = make_skill(tmp_path / "skill", tree={"sha256": EMPTY, "excluded": excluded, "manifest": {}})
    replay_refused(skill, project, "tree.excluded")


def test_an_exclusion_cannot_hide_a_file_the_skill_writes(tmp_path: Path, project: Path) -> None:
    skill = make_skill(tmp_path / "skill", files={"files/notes.bin": b"\0"}, binary=("files/notes.bin",),
                       tree={"sha256": EMPTY, "excluded": ["notes.bin"], "manifest": {}})
    replay_refused(skill, project, "tree.excluded", "the skill writes it")


def test_run_output_names_are_accepted_literally(tmp_path: Path, project: Path) -> None:
    """A log and a golden file the run wrote, one with a `*` written as `[*]`: accepted, and they
    leave out exactly those files."""
    skill = make_skill(tmp_path / "skill", tree={"sha256": EMPTY, "excluded": ["train.log", "out/gold[*].pt"],
                                                 "manifest": {}})
    paths = check_record_paths(skill, project, __import__("json").loads((skill / "replay.json").read_text()))
    assert paths.excluded == ["train.log", "out/gold*.pt"]


def test_replay_names_the_files_parsed_from_the_patch(tmp_path: Path, project: Path) -> None:
    skill = make_skill(tmp_path / "skill", patch=new_file_patch("pkg/added.py"))
    proc = run_cli("replay", str(skill), str(project))
    assert proc.returncode == 1, proc.stderr  # the made-up tree hash differs
    assert "(1 file(s))" in proc.stdout + proc.stderr and "patch: pkg/added.py" in proc.stdout + proc.stderr


@pytest.mark.parametrize("listed", [[], ["pkg/harmless.py"], ["pkg/added.py", "pkg/other.py"]])
def test_a_patch_touching_other_files_than_listed_is_refused(tmp_path: Path, project: Path, listed: list) -> None:
    skill = make_skill(tmp_path / "skill", patch=new_file_patch("pkg/added.py"), listed=listed)
    replay_refused(skill, project, "manual_patch.files")


def test_check_is_made_before_anything_is_written(tmp_path: Path, project: Path) -> None:
    import json

    skill = make_skill(tmp_path / "skill", tree={"sha256": EMPTY, "excluded": ["*"], "manifest": {}})
    with pytest.raises(ReplayError, match="tree.excluded"):
        check_record_paths(skill, project, json.loads((skill / "replay.json").read_text()))
