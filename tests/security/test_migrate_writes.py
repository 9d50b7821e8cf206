"""`migrate --write` / `--output --force` against hostile trees and interruptions."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ascend_migrate.fix.commit import ChangedSincePlanned
from ascend_migrate.fix.migrate import apply, plan
from ascend_migrate.fix.rewrite import Options

from .conftest import ROOT, make_project, run_cli, snapshot

OWN = (".ascend-migrate", "ascend-migrate-changes")


def _project_files(snap: dict) -> dict:
    return {k: v for k, v in snap.items() if not k.startswith(OWN)}


def _temps(root: Path) -> list[str]:
    found = []
    for dirpath, _dirs, files in os.walk(root):  # tolerant of files renamed while listing
        found += [os.path.join(dirpath, f) for f in files if f.endswith(".tmp")]
    return found


def test_edit_saved_between_plan_and_commit_is_not_discarded(project: Path) -> None:
    result = plan(project, Options(style="agnostic"))
    assert any(f.path == "pkg/utils.py" and f.new for f in result.files)
    edited = (project / "pkg" / "utils.py").read_text() + "\n# saved by the editor meanwhile\n"
    (project / "pkg" / "utils.py").write_text(edited)
    before = snapshot(project)
    with pytest.raises(ChangedSincePlanned, match="pkg/utils.py changed since the rewrite was planned"):
        apply(result, write=True)
    assert snapshot(project) == before  # the edit kept, nothing else rewritten either
    assert _temps(project) == []


def test_rewrite_as_root_keeps_owner_group_and_mode(project: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another owner needs root")
    utils = project / "pkg" / "utils.py"
    os.chown(utils, 4321, 4322)
    os.chmod(utils, 0o640)
    proc = run_cli("migrate", str(project), "--write", "--style", "agnostic", "-q")
    assert proc.returncode == 0, proc.stderr
    st = os.stat(utils)
    assert "torch_npu" in utils.read_text() or "npu" in utils.read_text()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (4321, 4322, 0o640)


def test_state_folder_symlinked_elsewhere_is_refused_before_writing(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, project / ".ascend-migrate")
    before = snapshot(project)
    proc = run_cli("migrate", str(project), "--write", "--style", "agnostic", "-q")
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "symbolic link" in errors[0], proc.stderr
    assert snapshot(project) == before
    assert list(elsewhere.iterdir()) == []


def test_runs_folder_symlinked_elsewhere_is_refused(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project / ".ascend-migrate").mkdir()
    os.symlink(elsewhere, project / ".ascend-migrate" / "runs")
    before = snapshot(project)
    proc = run_cli("migrate", str(project), "--write", "--style", "agnostic", "-q")
    assert proc.returncode == 2, proc.stderr
    assert snapshot(project) == before and list(elsewhere.iterdir()) == []


def test_output_force_does_not_follow_a_folder_link_in_out(project: Path, tmp_path: Path) -> None:
    out, victim = tmp_path / "out", tmp_path / "victim"
    out.mkdir()
    victim.mkdir()
    (victim / "keep.txt").write_text("not yours\n")
    os.symlink(victim, out / "pkg")  # OUT/pkg/utils.py would land in victim/
    before_out, before_victim = snapshot(out), snapshot(victim)
    proc = run_cli("migrate", str(project), "--output", str(out), "--force", "-q")
    assert proc.returncode == 2
    assert "symbolic link" in proc.stderr
    assert snapshot(victim) == before_victim and snapshot(out) == before_out
    assert _temps(out) == [] and _temps(victim) == []


def _start(project: Path, pause: float) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "ASCEND_MIGRATE_WRITE_PAUSE": str(pause),
           "ASCEND_MIGRATE_CACHE_DIR": str(project.parent / "cache")}
    return subprocess.Popen([sys.executable, "-m", "ascend_migrate", "migrate", str(project), "--write", "--style", "agnostic", "-q"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(cond, proc: subprocess.Popen, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if proc.poll() is not None or time.monotonic() > end:
            raise AssertionError(f"the run ended before the point to interrupt: {proc.communicate()}")
        time.sleep(0.005)


@pytest.fixture
def reference(tmp_path: Path) -> dict:
    """The project files after an uninterrupted `migrate --write`."""
    ref = make_project(tmp_path / "ref", n_extra=20)
    proc = run_cli("migrate", str(ref), "--write", "--style", "agnostic", "-q")
    assert proc.returncode == 0, proc.stderr
    return _project_files(snapshot(ref))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("point", ["staging", "renaming"])
def test_signal_during_write_leaves_tree_before_or_fully_migrated(tmp_path: Path, reference: dict, sig: int,
                                                                  point: str) -> None:
    project = make_project(tmp_path / "proj", n_extra=20)
    before = snapshot(project)
    proc = _start(project, pause=0.05)
    if point == "staging":
        _wait_for(lambda: bool(_temps(project)), proc)
    else:  # the first rename has happened: a project file already holds its migrated bytes
        changing = [k for k, v in reference.items() if v[0] == "file" and before.get(k) != v]

        def renamed() -> bool:
            for rel in changing:
                try:
                    if (project / rel).read_bytes() == reference[rel][1]:
                        return True
                except OSError:
                    continue
            return False

        _wait_for(renamed, proc)
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert f"interrupted by signal {int(sig)}" in err
    after = snapshot(project)
    assert _temps(project) == []
    if point == "staging":
        assert after == before  # rolled back: byte-identical, nothing of ours left
    else:
        assert _project_files(after) == reference  # every file migrated, none half
        assert (project / ".ascend-migrate" / "last-changes.json").is_file()
