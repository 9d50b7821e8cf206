"""Every field of a shared skill's replay.json has the shape `ascend-migrate skill` writes.

`"tree": "x"`, an unknown migration style or a list where a string belongs made the replay fail
with an internal error after it had migrated TARGET. The record is checked as a whole before
anything is written: a wrong type or value exits 2 and names the field.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from .replay_skill import make_skill, replay_refused


@pytest.mark.parametrize("tree, field", [
    ("x", "tree"), ([], "tree"),
    ({"sha256": 5, "excluded": [], "manifest": {}}, "tree.sha256"),
    ({"sha256": "not hex", "excluded": [], "manifest": {}}, "tree.sha256"),
    ({"sha256": "0" * 64, "excluded": "train.log", "manifest": {}}, "tree.excluded"),
    ({"sha256": "0" * 64, "excluded": [1], "manifest": {}}, "tree.excluded"),
    ({"sha256": "0" * 64, "excluded": [], "manifest": ["a"]}, "tree.manifest"),
    ({"sha256": "0" * 64, "excluded": [], "manifest": {"a.py": 3}}, "tree.manifest"),
])
def test_malformed_tree_is_refused(tmp_path: Path, project: Path, tree, field: str) -> None:
    replay_refused(make_skill(tmp_path / "skill", tree=tree), project, field)


@pytest.mark.parametrize("options, field", [
    ({"style": "rewrite-everything"}, "migrate.options.style"),
    ({"style": ["transfer"]}, "migrate.options.style"),
    ({"torch_npu_version": "2.1; rm -rf"}, "migrate.options.torch_npu_version"),
    ({"torch_npu_version": 2.1}, "migrate.options.torch_npu_version"),
    ({"min_torch": "latest"}, "migrate.options.min_torch"),
    ({"annotate": "yes"}, "migrate.options.annotate"),
    ({"entry": "train.py"}, "migrate.options.entry"),
    ({"entry": [["train.py"]]}, "migrate.options.entry"),
    ({"no_entry": ["../outside.py"]}, "migrate.options.no_entry"),
])
def test_malformed_migrate_options_are_refused(tmp_path: Path, project: Path, options: dict, field: str) -> None:
    replay_refused(make_skill(tmp_path / "skill", options=options), project, field)


@pytest.mark.parametrize("record, field", [
    ({"migrate": "ascend-migrate migrate ."}, "migrate"),
    ({"migrate": {"options": {}, "command": ["ascend-migrate"]}}, "migrate.command"),
    ({"manual_patch": ["manual.patch"]}, "manual_patch"),
    ({"manual_patch": {"file": "manual.patch", "files": "a.py"}}, "manual_patch.files"),
    ({"manual_patch": {"file": "manual.patch", "files": [], "binary_files": {"a": 1}}}, "manual_patch.binary_files"),
    ({"entry": "train.py"}, "entry"),
    ({"entry": {"unported_file": ["e.py"], "path": "e.py"}}, "entry.unported_file"),
    ({"golden": {"file": 7}}, "golden.file"),
    ({"validation": {"options": "fast"}}, "validation.options"),
])
def test_malformed_fields_are_refused(tmp_path: Path, project: Path, record: dict, field: str) -> None:
    replay_refused(make_skill(tmp_path / "skill", record=record), project, field)
