"""A shared skill may not write into version-control or tool state in TARGET.

`.git/config` with `core.fsmonitor`, a hook under `.git/hooks/`, a planted
`.ascend-migrate/` confirmation: each would act long after replay exits (the next `git
status`, the next commit, the next validation). Every field of `replay.json` and every file
`manual.patch` touches is refused when any component is a folder the tree walker skips, before
anything is written, and the message names the field.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascend_migrate.patchfile import PatchError, apply_patch
from ascend_migrate.safe_paths import UnsafePathError, check_relative
from ascend_migrate.scan.walk import skip_reason_by_name
from ascend_migrate.skillgen.errors import SkillGenError
from ascend_migrate.skillgen.writer import write_skill

from .conftest import run_cli, snapshot

PATCH_NEW = """diff --git a/{rel} b/{rel}
new file mode 100644
--- /dev/null
+++ b/{rel}
@@ -0,0 +1 @@
+{line}
"""


def _skill(folder: Path, *, binary=(), deleted=(), entry_path=None, patch_rel=None, entry_source=None,
           golden=None, thresholds=None, entry_opts=()) -> Path:
    folder.mkdir(parents=True)
    (folder / "files" / ".git").mkdir(parents=True)
    (folder / "files" / ".git" / "config").write_text("[core]\n\tfsmonitor = touch /tmp/pwned\n")
    (folder / "files" / "weights.bin").write_bytes(b"\0\1\2")
    (folder / "entry" / "unported").mkdir(parents=True)
    (folder / "entry" / "unported" / "val.py").write_text("def entry():\n    return 1\n")
    (folder / "manual.patch").write_text(PATCH_NEW.format(rel=patch_rel, line="#!/bin/sh") if patch_rel else "")
    record = {
        "schema": "ascend-migrate/replay/1", "model": "m",
        "migrate": {"options": {"style": "transfer", "entry": list(entry_opts)},
                    "command": "ascend-migrate migrate . --write"},
        "manual_patch": {"file": "manual.patch", "files": [], "binary_files": list(binary),
                         "deleted_binary": list(deleted)},
        "tree": {"sha256": "0" * 64, "excluded": [], "manifest": {}},
        "entry": ({"unported_file": entry_source or "entry/unported/val.py", "path": entry_path}
                  if entry_path else {}),
    }
    if golden:
        record["golden"] = {"file": golden}
    if thresholds:
        record["validation"] = {"thresholds_file": thresholds}
    (folder / "replay.json").write_text(json.dumps(record))
    return folder


@pytest.fixture
def target(project: Path) -> Path:
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (project / ".git" / "index").write_bytes(b"DIRC")
    return project


def _refused(target: Path, skill: Path, field: str) -> None:
    before = snapshot(target)
    proc = run_cli("replay", str(skill), str(target))
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: refusing the skill:"), proc.stderr
    assert field in lines[0], proc.stderr
    assert snapshot(target) == before  # nothing written, not even the migration


@pytest.mark.parametrize("rel", ["files/.git/config", "files/sub/.git/config", "files/.hg/hgrc",
                                 "files/.svn/entries", "files/.ascend-migrate/validation-confirmations.json",
                                 "files/.Git/config", "files/.venv/lib/site-packages/evil.pth"])
def test_binary_file_into_state_folder_is_refused(tmp_path: Path, target: Path, rel: str) -> None:
    _refused(target, _skill(tmp_path / "skill", binary=[rel]), "manual_patch.binary_files")


@pytest.mark.parametrize("rel", [".git/hooks/pre-commit", ".ascend-migrate/confirmations.json", "pkg/.hg/hgrc"])
def test_manual_patch_into_state_folder_is_refused(tmp_path: Path, target: Path, rel: str) -> None:
    _refused(target, _skill(tmp_path / "skill", patch_rel=rel), "manual.patch")


def test_deleted_binary_in_state_folder_is_refused(tmp_path: Path, target: Path) -> None:
    _refused(target, _skill(tmp_path / "skill", deleted=[".git/index"]), "manual_patch.deleted_binary")


def test_entry_path_into_state_folder_is_refused(tmp_path: Path, target: Path) -> None:
    _refused(target, _skill(tmp_path / "skill", entry_path=".git/hooks/post-checkout"), "entry.path")


@pytest.mark.parametrize("field, kwargs", [
    ("entry.unported_file", {"entry_path": "val.py", "entry_source": ".git/val.py"}),
    ("golden.file", {"golden": ".git/golden.pt"}),
    ("validation.thresholds_file", {"thresholds": ".hg/thresholds.yaml"}),
    ("migrate.options.entry", {"entry_opts": [".ascend-migrate/x.py"]}),
])
def test_every_path_field_is_checked(tmp_path: Path, target: Path, field: str, kwargs: dict) -> None:
    _refused(target, _skill(tmp_path / "skill", **kwargs), field)


def test_apply_patch_refuses_a_hook(tmp_path: Path) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    with pytest.raises(PatchError, match=r"\.git"):
        apply_patch(tmp_path, PATCH_NEW.format(rel=".git/hooks/pre-commit", line="#!/bin/sh"))
    assert not (tmp_path / ".git" / "hooks" / "pre-commit").exists()


def test_skill_writer_refuses_state_folders(tmp_path: Path) -> None:
    files = {"SKILL.md": "# m\n", "files/.git/config": b"[core]\n"}
    with pytest.raises(SkillGenError, match=r"\.git"):
        write_skill(tmp_path / "out", "m", files, force=False)
    assert not (tmp_path / "out" / "m" / "SKILL.md").exists()


def test_one_list_with_the_walker() -> None:
    """The refused names are the walker's by-name skips: nothing it leaves out can be written."""
    for name in (".git", ".hg", ".svn", ".bzr", "_darcs", ".jj", ".ascend-migrate", ".ascend-migrate-cache",
                 "site-packages", "node_modules", ".ipynb_checkpoints"):
        assert skip_reason_by_name(name)
        with pytest.raises(UnsafePathError, match="skill field"):
            check_relative(f"a/{name}/b", "skill field")
    assert check_relative("a/.github/workflows/ci.yml") == "a/.github/workflows/ci.yml"
    assert check_relative("a/git/b") == "a/git/b"
