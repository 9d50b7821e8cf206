"""`replay` with a shared (hostile) skill folder: every path it names stays inside TARGET."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ascend_migrate.patchfile import PatchError, apply_patch

from .conftest import run_cli, snapshot

PATCH_NEW = """diff --git a/{rel} b/{rel}
new file mode 100644
--- /dev/null
+++ b/{rel}
@@ -0,0 +1 @@
+print("planted")
"""


def _skill(folder: Path, *, binary=(), deleted=(), entry_path=None, patch_rel=None) -> Path:
    folder.mkdir(parents=True)
    (folder / "files").mkdir()
    (folder / "files" / "weights.bin").write_bytes(b"\0\1\2")
    (folder / "entry" / "unported").mkdir(parents=True)
    (folder / "entry" / "unported" / "val.py").write_text("def entry():\n    return 1\n")
    (folder / "manual.patch").write_text(PATCH_NEW.format(rel=patch_rel) if patch_rel else "")
    record = {
        "schema": "ascend-migrate/replay/1", "model": "m",
        "migrate": {"options": {"style": "transfer"}, "command": "ascend-migrate migrate . --write"},
        "manual_patch": {"file": "manual.patch", "files": [], "binary_files": list(binary),
                         "deleted_binary": list(deleted)},
        "tree": {"sha256": "0" * 64, "excluded": [], "manifest": {}},
        "entry": {"unported_file": "entry/unported/val.py", "path": entry_path} if entry_path else {},
    }
    (folder / "replay.json").write_text(json.dumps(record))
    return folder


@pytest.fixture
def world(tmp_path: Path, project: Path) -> dict:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "victim.txt").write_text("keep me\n")
    return {"target": project, "victim": victim, "tmp": tmp_path}


def _assert_refused(world: dict, skill: Path) -> None:
    before_t, before_v = snapshot(world["target"]), snapshot(world["victim"])
    proc = run_cli("replay", str(skill), str(world["target"]))
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: refusing the skill:"), proc.stderr
    assert snapshot(world["target"]) == before_t  # not even the migration ran
    assert snapshot(world["victim"]) == before_v


@pytest.mark.parametrize("binary", ["files/../../../victim/victim.txt", "/planted.bin", "files//planted.bin",
                                    "files/a\0b", "files/C:/x.bin", "files/..\\..\\x.bin"])
def test_binary_file_list_cannot_write_outside_target(world: dict, binary: str) -> None:
    _assert_refused(world, _skill(world["tmp"] / "skill", binary=[binary]))


@pytest.mark.parametrize("rel", ["../victim/victim.txt", "/abs/victim.txt", "pkg/../../victim/victim.txt"])
def test_deleted_file_list_cannot_delete_outside_target(world: dict, rel: str) -> None:
    target_rel = rel.replace("/abs/", str(world["victim"]) + "/")
    _assert_refused(world, _skill(world["tmp"] / "skill", deleted=[target_rel]))


@pytest.mark.parametrize("entry", ["../victim/evil.py", "ABSOLUTE"])
def test_entry_path_cannot_write_outside_target(world: dict, entry: str) -> None:
    entry = str(world["victim"] / "evil.py") if entry == "ABSOLUTE" else entry
    _assert_refused(world, _skill(world["tmp"] / "skill", entry_path=entry))


def test_binary_copy_through_a_symlinked_folder_in_target_is_refused(world: dict) -> None:
    os.symlink(world["victim"], world["target"] / "assets")
    _assert_refused(world, _skill(world["tmp"] / "skill", binary=["files/assets/weights.bin"]))


def test_manual_patch_through_a_symlinked_folder_is_refused(world: dict) -> None:
    os.symlink(world["victim"], world["target"] / "linked")
    _assert_refused(world, _skill(world["tmp"] / "skill", patch_rel="linked/planted.py"))


def test_manual_patch_with_dotdot_is_refused(world: dict) -> None:
    _assert_refused(world, _skill(world["tmp"] / "skill", patch_rel="../victim/planted.py"))


def test_binary_source_read_through_a_link_in_the_skill_is_refused(world: dict) -> None:
    skill = _skill(world["tmp"] / "skill", binary=["files/secret/victim.txt"])
    os.symlink(world["victim"], skill / "files" / "secret")  # would copy a file from outside the skill
    _assert_refused(world, skill)


def test_apply_patch_checks_every_hunk_before_writing(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    patch = ("--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 10\n"
             "--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-y = 999\n+y = 20\n")
    with pytest.raises(PatchError, match="b.py:1"):
        apply_patch(tmp_path, patch)
    assert (tmp_path / "a.py").read_text() == "x = 1\n"  # the first file was not half-applied


def test_apply_patch_does_not_follow_a_planted_temporary_name(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("keep\n")
    os.symlink(outside, tmp_path / ".a.py.patch.tmp")
    apply_patch(tmp_path, "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 10\n")
    assert (tmp_path / "a.py").read_text() == "x = 10\n" and outside.read_text() == "keep\n"
