"""`ascend-migrate kb ...` through click."""
from __future__ import annotations

import json

from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.knowledge.coverage import available_versions
from kbsync_wheelkit import modern_files, write_tree, write_wheel


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_sync_wheel_then_check(tmp_path):
    wheel = write_wheel(tmp_path, modern_files("9.9.0"))
    out = tmp_path / "kb"
    result = run("kb", "sync", "--wheel", str(wheel), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "torch_functions" in result.output and "3" in result.output
    written = out / "torch_npu-9.9.0.json"
    assert json.loads(written.read_text())["torch_npu_version"] == "9.9.0"

    assert run("kb", "sync", "--wheel", str(wheel), "--out", str(out), "--check").exit_code == 0
    written.write_text(written.read_text().replace('"zeros"', '"zeroes"'))
    stale = run("kb", "sync", "--wheel", str(wheel), "--out", str(out), "--check")
    assert stale.exit_code == 1
    assert '"zeroes"' in stale.output  # the diff is shown


def test_sync_site_packages_json(tmp_path):
    site = write_tree(tmp_path / "site", modern_files("9.9.1"))
    result = run("kb", "sync", "--site-packages", str(site), "--out", str(tmp_path / "kb"), "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["torch_npu_version"] == "9.9.1" and summary["cuda_functions"] == 2


def test_sync_needs_exactly_one_source(tmp_path):
    wheel = write_wheel(tmp_path, modern_files())
    assert run("kb", "sync").exit_code == 2
    both = run("kb", "sync", "--wheel", str(wheel), "--site-packages", str(tmp_path))
    assert both.exit_code == 2 and "exactly one" in both.output


def test_sync_bad_wheel_is_an_error_not_a_traceback(tmp_path):
    bogus = tmp_path / "x.whl"
    bogus.write_bytes(b"nope")
    result = run("kb", "sync", "--wheel", str(bogus), "--out", str(tmp_path))
    assert result.exit_code == 1 and "not a wheel" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_versions_show_diff():
    versions = run("kb", "versions", "--json")
    assert versions.exit_code == 0
    rows = json.loads(versions.output)
    assert [r["version"] for r in rows if r["coverage"]] == available_versions()
    # per release, whether operator data is present and the op-plugin commit it was read at
    from ascend_migrate.knowledge.npu_ops import load_ops, ops_versions

    assert [r["version"] for r in rows if r["operators"]] == ops_versions()
    only_ops = next(r for r in rows if r["version"] == "2.2.0")
    assert only_ops["coverage"] is False
    assert only_ops["operators"]["op_plugin_commit"] == load_ops("2.2.0").source["op_plugin_commit"]
    assert only_ops["operators"]["layout"] == "per-version folder" and only_ops["operators"]["aten_overloads"] > 500
    text = run("kb", "versions").output
    assert "2.2.0            coverage: no coverage file" in text
    assert f"from op-plugin {only_ops['operators']['op_plugin_commit'][:10]}" in text

    show = run("kb", "show", "2.1.0")
    assert show.exit_code == 0
    assert "using coverage of torch_npu 2.1.0.post17 for 2.1.0" in show.output
    assert "torch.jit.script disabled:  True" in show.output

    assert run("kb", "show", "0.1").exit_code == 1

    diff = run("kb", "diff", "2.1.0.post10", "2.13.0")
    assert diff.exit_code == 0
    data = json.loads(diff.output)
    assert "torch.cuda.CUDAGraph" in data["patches"]["only_b"]


def test_script_wrapper(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "scripts" / "sync_kb.py"
    wheel = write_wheel(tmp_path, modern_files("9.9.2"))
    proc = subprocess.run([sys.executable, str(script), "--wheel", str(wheel), "--out", str(tmp_path / "kb")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "kb" / "torch_npu-9.9.2.json").is_file()
