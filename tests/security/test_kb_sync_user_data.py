"""`kb sync` with a wheel from anywhere: the installed knowledge is never rewritten.

A four-file wheel claiming a shipped release (`__version__ = "2.13.0"`) used to replace that
release's coverage inside the installed package, silently and in place, changing every later
scan. Now a sync writes to the user's data folder (or `--out`), atomically; replacing a release
that exists already needs `--force`; and the loader, which reads that folder first, says so.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.knowledge import coverage as cov_mod
from ascend_migrate.knowledge import sync as sync_mod

WHEEL_KIT = Path(__file__).resolve().parents[1] / "kbsync"


@pytest.fixture
def kit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.syspath_prepend(str(WHEEL_KIT))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    import kbsync_wheelkit

    return kbsync_wheelkit


def _package_bytes() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in cov_mod.COVERAGE_DIR.glob("torch_npu-*.json")}


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_sync_of_a_shipped_release_leaves_the_package_alone(kit, tmp_path: Path) -> None:
    before = _package_bytes()
    wheel = kit.write_wheel(tmp_path, kit.modern_files("2.13.0"), name="torch_npu-2.13.0-py3-none-any.whl")
    refused = _run("kb", "sync", "--wheel", str(wheel))
    assert refused.exit_code != 0, refused.output
    assert "--force" in refused.output and "2.13.0" in refused.output
    assert _package_bytes() == before
    assert not (tmp_path / "data").exists()  # nothing written anywhere

    forced = _run("kb", "sync", "--wheel", str(wheel), "--force")
    assert forced.exit_code == 0, forced.output
    assert _package_bytes() == before  # still: the package is read, never written
    user = tmp_path / "data" / "ascend-migrate" / "coverage" / "torch_npu-2.13.0.json"
    assert json.loads(user.read_text())["torch_npu_version"] == "2.13.0"
    assert str(user) in forced.output


def test_new_release_goes_to_the_user_data_folder_and_is_read_first(kit, tmp_path: Path) -> None:
    before = _package_bytes()
    wheel = kit.write_wheel(tmp_path, kit.modern_files("9.9.0"))
    result = _run("kb", "sync", "--wheel", str(wheel))
    assert result.exit_code == 0, result.output
    user_dir = tmp_path / "data" / "ascend-migrate" / "coverage"
    assert (user_dir / "torch_npu-9.9.0.json").is_file()
    assert _package_bytes() == before
    assert [p.name for p in user_dir.iterdir()] == ["torch_npu-9.9.0.json"]  # no temporary left behind

    assert cov_mod.newest_version() == "9.9.0"
    assert cov_mod.load_coverage("9.9.0").path.parent == user_dir
    versions = _run("kb", "versions")
    assert versions.exit_code == 0
    assert str(user_dir) in versions.output  # the listing says where the extra release comes from
    show = _run("kb", "show", "9.9.0")
    assert str(user_dir) in show.output

    again = _run("kb", "sync", "--wheel", str(wheel))
    assert again.exit_code != 0 and "--force" in again.output


def test_out_folder_needs_force_to_replace(kit, tmp_path: Path) -> None:
    wheel = kit.write_wheel(tmp_path, kit.modern_files("9.9.0"))
    out = tmp_path / "kb"
    assert _run("kb", "sync", "--wheel", str(wheel), "--out", str(out)).exit_code == 0
    target = out / "torch_npu-9.9.0.json"
    target.write_text("{}\n")
    refused = _run("kb", "sync", "--wheel", str(wheel), "--out", str(out))
    assert refused.exit_code != 0 and target.read_text() == "{}\n"
    assert _run("kb", "sync", "--wheel", str(wheel), "--out", str(out), "--force").exit_code == 0
    assert json.loads(target.read_text())["torch_npu_version"] == "9.9.0"
    assert not (tmp_path / "data").exists()


def test_sync_api_writes_atomically(kit, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheel = kit.write_wheel(tmp_path, kit.modern_files("9.9.0"))
    out = tmp_path / "kb"
    path, _doc = sync_mod.sync(wheel=wheel, out_dir=out)
    old = path.read_bytes()

    def fail(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError):
        sync_mod.sync(wheel=wheel, out_dir=out, force=True)
    assert path.read_bytes() == old  # the old file whole, no half-written one
    assert sorted(p.name for p in out.iterdir()) == [path.name]


def test_scan_results_follow_a_synced_release(kit, tmp_path: Path, project: Path) -> None:
    """The stored report and the per-file cache are keyed on the user's coverage too: a release
    synced after a scan is used by the next one, not hidden behind the stored report."""
    from .conftest import run_cli

    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "ASCEND_MIGRATE_CACHE_DIR": str(tmp_path / "cache")}

    def version() -> str:
        proc = run_cli("scan", str(project), "--format", "json", env=env)
        return json.loads(proc.stdout)["torch_npu_version"]

    shipped = version()
    assert version() == shipped  # answered from the stored report
    wheel = kit.write_wheel(tmp_path, kit.modern_files("99.0.0"), name="torch_npu-99.0.0-py3-none-any.whl")
    assert run_cli("kb", "sync", "--wheel", str(wheel), env=env).returncode == 0
    assert version() == "99.0.0"
