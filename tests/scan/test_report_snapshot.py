"""A re-scan of an unchanged tree writes the stored report again: same bytes as a fresh scan
(but the scan time), never stale after an edit, an option change or a fresh file."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.scan import engine
from ascend_migrate.scan import report_snapshot as snapshots
from scan.report_cli import UTIL, isolate, scan_cli, without_time, write_project



@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    isolate(tmp_path, monkeypatch)


@pytest.fixture
def project(tmp_path) -> Path:
    return write_project(tmp_path / "proj")


_scan, _without_time = scan_cli, without_time


def _no_scan(monkeypatch) -> None:
    def refuse(*_a, **_k):
        raise AssertionError("the tree was scanned although nothing changed")
    monkeypatch.setattr(engine, "run_scan", refuse)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "md", "csv"])
def test_unchanged_tree_gets_the_fresh_scans_report_without_scanning(project, monkeypatch, fmt):
    _, fresh = _scan(project, "--format", fmt, "--no-cache")
    _, first = _scan(project, "--format", fmt)
    _no_scan(monkeypatch)
    _, again = _scan(project, "--format", fmt)
    assert "nccl" in fresh.lower()
    assert _without_time(fmt, again) == _without_time(fmt, first) == _without_time(fmt, fresh)


def test_the_stored_json_report_carries_this_runs_time(project, monkeypatch):
    _scan(project, "--format", "json")
    _no_scan(monkeypatch)
    _, again = _scan(project, "--format", "json")
    seconds = json.loads(again)["duration_s"]
    assert 0 <= seconds < 60 and str(snapshots.STAND_IN_SECONDS) not in again


def test_an_edit_is_seen(project):
    _scan(project, "--format", "json")
    before = json.loads(_scan(project, "--format", "json")[1])
    (project / "pkg" / "util.py").write_text(UTIL + "\n\ndef more(m):\n    return m.cuda()\n", encoding="utf-8")
    after = json.loads(_scan(project, "--format", "json")[1])
    assert after["counts"]["findings"] == before["counts"]["findings"] + 1


def test_a_same_size_rewrite_with_the_old_mtime_is_not_taken_from_the_snapshot(project):
    _, before = _scan(project, "--format", "json")
    target = project / "pkg" / "util.py"
    st = target.stat()
    target.write_text(UTIL.replace("cuda:0", "cpu:00"), encoding="utf-8")  # same size; mtime put back below
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    _, again = _scan(project, "--format", "json")  # the inode change time differs: the file is read again
    _, fresh = _scan(project, "--format", "json", "--no-cache")
    assert "cuda:0" in before and "cuda:0" not in again
    assert _without_time("json", again) == _without_time("json", fresh)


def test_added_and_removed_files_are_seen(project):
    _scan(project, "--format", "json")
    (project / "extra.py").write_text("import torch\nx = torch.cuda.is_available()\n")
    assert any(f["path"] == "extra.py" for f in json.loads(_scan(project, "--format", "json")[1])["findings"])
    (project / "extra.py").unlink()
    assert not any(f["path"] == "extra.py" for f in json.loads(_scan(project, "--format", "json")[1])["findings"])


def test_options_and_project_settings_are_part_of_the_key(project):
    _, full = _scan(project, "--format", "json")
    _, only = _scan(project, "--format", "json", "--select", "DV")
    assert {f["rule"][:2] for f in json.loads(only)["findings"]} == {"DV"}
    assert len(json.loads(full)["findings"]) > len(json.loads(only)["findings"])
    (project / "pyproject.toml").write_text('[tool.ascend-migrate]\nexclude = ["pkg"]\n')
    excluded = json.loads(_scan(project, "--format", "json")[1])
    assert not any(f["path"].startswith("pkg/") for f in excluded["findings"])


def test_fresh_files_are_not_trusted(project, monkeypatch):
    monkeypatch.setattr(snapshots, "RACY_NS", 10 ** 18)  # every file counts as just written
    _scan(project, "--format", "json")
    assert not list((Path(os.environ["ASCEND_MIGRATE_CACHE_DIR"]) / "report").glob("*.snapshot"))


def test_a_damaged_snapshot_is_a_miss(project):
    _, first = _scan(project, "--format", "json")
    (stored,) = (Path(os.environ["ASCEND_MIGRATE_CACHE_DIR"]) / "report").glob("*.snapshot")
    data = stored.read_bytes()
    stored.write_bytes(data[:-100])  # truncated: the length in the head no longer matches
    _, again = _scan(project, "--format", "json")
    assert _without_time("json", again) == _without_time("json", first)


def test_exit_code_follows_fail_on_from_a_stored_report(project, monkeypatch):
    _scan(project, "--format", "json")
    _no_scan(monkeypatch)
    code_error = CliRunner().invoke(cli, ["scan", str(project), "--format", "json", "--fail-on", "info"]).exit_code
    code_never = CliRunner().invoke(cli, ["scan", str(project), "--format", "json", "--fail-on", "never"]).exit_code
    assert (code_error, code_never) == (1, 0)


def test_written_reports_follow_the_umask(project, tmp_path):
    old = os.umask(0o027)
    try:
        out = tmp_path / "report.json"
        _scan(project, "--format", "json", "-o", str(out))
        assert stat.S_IMODE(out.stat().st_mode) == 0o640
        out.chmod(0o604)  # an existing report keeps its mode when replaced
        _scan(project, "--format", "json", "-o", str(out), "--no-cache")
        assert stat.S_IMODE(out.stat().st_mode) == 0o604
    finally:
        os.umask(old)


def test_the_tools_digest_is_kept_and_a_damaged_memo_is_recomputed(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshots, "_TOOL_DIGEST", None)
    first = snapshots.tool_digest()
    memos = list((tmp_path / "cache" / "report").glob("tool-*.digest"))
    assert len(memos) == 1 and memos[0].read_text() == first
    memos[0].write_text("not a digest")
    monkeypatch.setattr(snapshots, "_TOOL_DIGEST", None)
    assert snapshots.tool_digest() == first  # computed again from the package's bytes
    assert memos[0].read_text() == first


def test_markdown_summary_flag_needs_markdown_and_is_not_served_as_the_full_report(tmp_path, monkeypatch):
    """`--summary` is a view of the Markdown report: refused with another format, and a stored
    full report is never given for it (nor the summary for a full one)."""
    isolate(tmp_path, monkeypatch)
    root = write_project(tmp_path / "proj")
    code, _ = scan_cli(root, "--format", "text", "--summary")
    assert code == 2
    _, full = scan_cli(root, "--format", "md")
    _, summary = scan_cli(root, "--format", "md", "--summary")
    _, full_again = scan_cli(root, "--format", "md")
    assert "## Entry points" in summary and "| `train.py` |" in summary and "## Findings" not in summary
    assert "## Findings" in full and without_time("md", full_again) == without_time("md", full)
    assert full.startswith(summary.split("## Entry points")[0].split(" scanned in ")[0])
