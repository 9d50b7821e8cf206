"""A tree that ships `.ascend-migrate` (or a file in it) as a symlink: nothing is written through it."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ascend_migrate.fix.runs import last_change_list

from .conftest import run_cli, snapshot


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


def test_validate_confirm_does_not_write_through_a_linked_state_folder(project: Path, elsewhere: Path) -> None:
    os.symlink(elsewhere, project / ".ascend-migrate")
    before = snapshot(project)
    proc = run_cli("validate", "run", str(project), "--confirm", "host-environment", "--note", "checked by hand")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "symbolic link" in proc.stderr
    assert list(elsewhere.iterdir()) == [] and snapshot(project) == before


def test_validate_report_does_not_write_through_a_linked_state_folder(project: Path, elsewhere: Path) -> None:
    os.symlink(elsewhere, project / ".ascend-migrate")
    proc = run_cli("validate", "run", str(project), "--no-ddp")
    assert proc.returncode == 2 and "symbolic link" in proc.stderr, proc.stderr
    assert list(elsewhere.iterdir()) == []


def test_validate_confirm_replaces_a_linked_record_instead_of_writing_through(project: Path,
                                                                               elsewhere: Path) -> None:
    victim = elsewhere / "victim.json"
    victim.write_text("{}\n")
    (project / ".ascend-migrate").mkdir()
    os.symlink(victim, project / ".ascend-migrate" / "validation-confirmations.json")
    proc = run_cli("validate", "run", str(project), "--confirm", "host-environment", "--note", "ok", "--no-ddp")
    assert proc.returncode in (0, 1), proc.stderr
    assert victim.read_text() == "{}\n"
    record = project / ".ascend-migrate" / "validation-confirmations.json"
    assert not record.is_symlink() and "host-environment" in json.loads(record.read_text())["confirmed"]


def test_linked_run_pointer_is_not_read(project: Path, elsewhere: Path) -> None:
    (elsewhere / "changes.json").write_text(json.dumps({"run": {"source": "/"}}))
    (elsewhere / "last-changes.json").write_text(json.dumps({"changes": str(elsewhere / "changes.json")}))
    (project / ".ascend-migrate").mkdir()
    os.symlink(elsewhere / "last-changes.json", project / ".ascend-migrate" / "last-changes.json")
    assert last_change_list(project) is None


def test_replay_report_does_not_write_through_a_linked_state_folder(project: Path, elsewhere: Path) -> None:
    from ascend_migrate.replay import ReplayError, write_state_files

    os.symlink(elsewhere, project / ".ascend-migrate")
    with pytest.raises(ReplayError, match="symbolic link"):
        write_state_files(project, {"validation-report.json": "{}"})
    assert list(elsewhere.iterdir()) == []
