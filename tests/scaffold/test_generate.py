"""`ascend-migrate scaffold training DIR`: what it writes, and what it refuses to do."""
from __future__ import annotations

import ast

import yaml
from click.testing import CliRunner

from ascend_migrate import __version__
from ascend_migrate.cli import cli
import pytest


def test_writes_train_and_config(tmp_path):
    res = CliRunner().invoke(cli, ["scaffold", "training", str(tmp_path / "proj")])
    assert res.exit_code == 0, res.output
    train = tmp_path / "proj" / "train.py"
    config = tmp_path / "proj" / "config.yaml"
    assert f"wrote {train}" in res.output and f"wrote {config}" in res.output
    tree = ast.parse(train.read_text(encoding="utf-8"))
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"train_steps", "train", "main", "configure_optimizers"} <= functions
    assert f"ascend-migrate {__version__}" in train.read_text(encoding="utf-8")
    assert isinstance(yaml.safe_load(config.read_text(encoding="utf-8")), dict)


def test_refuses_to_overwrite_without_force(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "train.py").write_text("# my edits\n", encoding="utf-8")
    res = CliRunner().invoke(cli, ["scaffold", "training", str(proj)])
    assert res.exit_code == 1
    assert "refusing to overwrite" in res.output and "--force" in res.output
    assert (proj / "train.py").read_text(encoding="utf-8") == "# my edits\n"
    assert not (proj / "config.yaml").exists()  # nothing written when one file clashes

    res = CliRunner().invoke(cli, ["scaffold", "training", str(proj), "--force"])
    assert res.exit_code == 0, res.output
    assert "def train_steps" in (proj / "train.py").read_text(encoding="utf-8")


def test_force_replaces_a_symlink_not_its_target(tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("keep me\n", encoding="utf-8")
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "train.py").symlink_to(outside)
    res = CliRunner().invoke(cli, ["scaffold", "training", str(proj), "--force"])
    assert res.exit_code == 0, res.output
    assert outside.read_text(encoding="utf-8") == "keep me\n"
    assert not (proj / "train.py").is_symlink()


def test_target_that_is_a_file_is_an_error(tmp_path):
    target = tmp_path / "file"
    target.write_text("x", encoding="utf-8")
    res = CliRunner().invoke(cli, ["scaffold", "training", str(target)])
    assert res.exit_code != 0


def test_help_names_the_command_and_files():
    res = CliRunner().invoke(cli, ["--help"])
    assert "scaffold" in res.output
    res = CliRunner().invoke(cli, ["scaffold", "training", "--help"])
    assert res.exit_code == 0
    for word in ("train.py", "config.yaml", "--force", "train_steps", "torchrun"):
        assert word in res.output


@pytest.mark.needs_torch
def test_shipped_config_matches_the_script_defaults(scaffold_dir, train_mod):
    """config.yaml lists every key the script knows, with the script's defaults."""
    shipped = yaml.safe_load((scaffold_dir / "config.yaml").read_text(encoding="utf-8"))
    assert shipped == train_mod.default_config()


def test_scaffold_is_clean_for_the_scanner(scaffold_dir):
    """The scaffold is the pattern ports should reach: no finding that needs work."""
    from ascend_migrate.scan.api import scan

    result = scan(scaffold_dir)
    needs_work = [f for f in result.findings if f.severity != "info"]
    assert not needs_work, [(f.rule, f.line, f.message) for f in needs_work]
