"""One spelling across commands (--format, --exclude) and project config from the nearest
pyproject.toml, applied by scan, migrate and validate alike."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli
from cli_commands import all_commands

CUDA = "import torch\nx = torch.randn(2).cuda()\nmajor, minor = torch.cuda.get_device_capability()\n"


def test_every_json_flag_has_a_format_spelling():
    with_json = [(n, c) for n, c in all_commands() if any("--json" in p.opts for p in c.params)]
    assert len(with_json) >= 4
    for name, cmd in with_json:
        fmt = next(p for p in cmd.params if "--format" in p.opts)
        assert "json" in fmt.type.choices, name


@pytest.mark.parametrize("args", [["rules"], ["kb", "versions"]])
def test_format_json_equals_json_alias(args):
    runner = CliRunner()
    alias = runner.invoke(cli, [*args, "--json"])
    spelled = runner.invoke(cli, [*args, "--format", "json"])
    assert alias.exit_code == spelled.exit_code == 0, spelled.output
    assert json.loads(spelled.stdout) == json.loads(alias.stdout)
    assert runner.invoke(cli, [*args, "--format", "text"]).stdout != alias.stdout


def test_validate_accepts_md():
    out = CliRunner().invoke(cli, ["validate", "checklist", "--format", "md"])
    assert out.exit_code == 0 and out.stdout.lstrip().startswith("#")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "pkg" / "vendored").mkdir(parents=True)
    (root / "pkg" / "train.py").write_text(CUDA, encoding="utf-8")
    (root / "pkg" / "vendored" / "lib.py").write_text(CUDA, encoding="utf-8")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "proj"\nversion = "0"\n\n[tool.ascend-migrate]\n'
        'exclude = ["pkg/vendored"]\nignore = ["CU101"]\n', encoding="utf-8")
    return root


def _scan_json(args):
    out = CliRunner().invoke(cli, ["scan", *args, "--format", "json", "--no-cache", "--fail-on", "never"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_scan_of_a_subfolder_uses_the_parent_config(project):
    report = _scan_json([str(project / "pkg")])
    paths = {f["path"] for f in report["findings"]}
    assert paths == {"train.py"}  # pkg/vendored excluded by the parent's config
    assert "CU101" not in {f["rule"] for f in report["findings"]}
    (project / "pyproject.toml").write_text('[project]\nname = "proj"\n', encoding="utf-8")
    unconfigured = _scan_json([str(project / "pkg")])
    assert "CU101" in {f["rule"] for f in unconfigured["findings"]}
    assert "vendored/lib.py" in {f["path"] for f in unconfigured["findings"]}


def test_scan_exclude_option(project):
    (project / "pyproject.toml").unlink()
    report = _scan_json([str(project), "--exclude", "pkg/vendored"])
    assert {f["path"] for f in report["findings"]} == {"pkg/train.py"}


def test_migrate_exclude_and_parent_config(project):
    out = CliRunner().invoke(cli, ["migrate", str(project / "pkg")])
    assert out.exit_code in (0, 1), out.output
    assert "train.py" in out.stdout and "vendored/lib.py" not in out.stdout
    (project / "pyproject.toml").unlink()
    both = CliRunner().invoke(cli, ["migrate", str(project)])
    assert "pkg/vendored/lib.py" in both.stdout
    one = CliRunner().invoke(cli, ["migrate", str(project), "--exclude", "pkg/vendored"])
    assert "pkg/train.py" in one.stdout and "pkg/vendored/lib.py" not in one.stdout


def test_validate_scan_uses_the_parent_config(project):
    from ascend_migrate.validate.runner import _scan

    result, error = _scan(project / "pkg")
    assert error is None
    assert {f.path for f in result.findings} == {"train.py"}
    assert "CU101" not in {f.rule for f in result.findings}
