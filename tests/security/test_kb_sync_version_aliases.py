"""`kb sync` of a wheel naming a packaged build another way: written only with --force, and
never the default over the packaged coverage.

A crafted wheel claiming `v2.13.0` or `2.13.0.post0` was written without --force (the check
compared file names), then won every later scan: the loader broke the tie of `v2.13.0` and
`2.13.0` by string and took `2.13.0.post0` as the newer build, so a scan read the wheel's
coverage (CU001 info became CU002 error) and said nothing of where it came from. Builds are
now compared by version, a version the loader does not read exactly is refused, a synced name
of a packaged build sorts below it, and a text report names a synced file it reads.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.knowledge import coverage as cov_mod

WHEEL_KIT = Path(__file__).resolve().parents[1] / "kbsync"


@pytest.fixture
def kit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.syspath_prepend(str(WHEEL_KIT))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    import kbsync_wheelkit

    return kbsync_wheelkit


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def _user_dir(tmp_path: Path) -> Path:
    return tmp_path / "data" / "ascend-migrate" / "coverage"


def test_a_v_prefixed_version_is_refused(kit, tmp_path: Path) -> None:
    wheel = kit.write_wheel(tmp_path, kit.modern_files("v2.13.0"), name="torch_npu-v-py3-none-any.whl")
    refused = _run("kb", "sync", "--wheel", str(wheel), "--force")
    assert refused.exit_code == 2, refused.output
    assert "not a release version" in refused.output
    assert not _user_dir(tmp_path).exists()


@pytest.mark.parametrize("claimed", ["2.13.0.post0", "02.13.0"])
def test_another_name_of_a_packaged_build_needs_force(kit, tmp_path: Path, claimed: str) -> None:
    packaged = cov_mod.newest_version()
    assert packaged == "2.13.0"  # the newest packaged release, which the wheel names another way
    wheel = kit.write_wheel(tmp_path, kit.modern_files(claimed), name="torch_npu-x-py3-none-any.whl")
    refused = _run("kb", "sync", "--wheel", str(wheel))
    assert refused.exit_code != 0 and "--force" in refused.output and "packaged" in refused.output, refused.output
    assert not _user_dir(tmp_path).exists()


def test_a_forced_alias_never_becomes_the_default(kit, tmp_path: Path) -> None:
    wheel = kit.write_wheel(tmp_path, kit.modern_files("2.13.0.post0"), name="torch_npu-p-py3-none-any.whl")
    forced = _run("kb", "sync", "--wheel", str(wheel), "--force")
    assert forced.exit_code == 0, forced.output
    assert (_user_dir(tmp_path) / "torch_npu-2.13.0.post0.json").is_file()
    assert cov_mod.newest_version() == "2.13.0"
    for asked in (None, "2.13", "2.13.0"):
        resolved = cov_mod.resolve_version(asked)
        assert resolved == "2.13.0" and not cov_mod.is_user_file(cov_mod.coverage_file(resolved)), asked
    assert cov_mod.resolve_version("2.13.0.post0") == "2.13.0.post0"  # still there when asked for by name


def test_aliases_left_by_an_older_sync_sort_below_the_packaged_build(kit, tmp_path: Path) -> None:
    """Files an earlier version of the tool wrote (`torch_npu-v2.13.0.json`) lose the tie."""
    packaged = cov_mod.coverage_file("2.13.0")
    user = _user_dir(tmp_path)
    user.mkdir(parents=True)
    for name in ("v2.13.0", "2.13.0.post0"):
        text = packaged.read_text(encoding="utf-8").replace('"torch_npu_version": "2.13.0"',
                                                            f'"torch_npu_version": "{name}"')
        (user / f"torch_npu-{name}.json").write_text(text, encoding="utf-8")
    versions = cov_mod.available_versions()
    assert versions[-1] == "2.13.0", versions
    assert cov_mod.resolve_version(None) == "2.13.0"


def test_scan_report_names_the_synced_file_it_reads(kit, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "train.py").write_text("import torch\ntorch.cuda.synchronize()\n", encoding="utf-8")
    plain = _run("scan", str(project), "--no-cache")
    assert "kb sync" not in plain.output, plain.output

    wheel = kit.write_wheel(tmp_path, kit.modern_files("99.0.0"), name="torch_npu-99.0.0-py3-none-any.whl")
    assert _run("kb", "sync", "--wheel", str(wheel)).exit_code == 0
    synced = _user_dir(tmp_path) / "torch_npu-99.0.0.json"
    for fmt in ("text", "md"):
        report = _run("scan", str(project), "--no-cache", "--format", fmt)
        assert "torch_npu 99.0.0" in report.output and str(synced) in report.output, (fmt, report.output[:600])
