"""Thresholds and options from a shared skill are bounded like the command line's.

A skill's `thresholds.yaml` set `ddp.nproc: 100000` (replay would start that many processes)
or `ddp.timeout_s: 1e12`; `replay.json` could carry the same through validation options or a
recorded torchrun command. The loader refuses values outside the ranges `validate run` accepts,
naming the key, and replay refuses such options before anything runs.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from ascend_migrate.knowledge.loader import KnowledgeError
from ascend_migrate.validate.thresholds import THRESHOLDS_FILE, load_thresholds

SHIPPED = THRESHOLDS_FILE.read_text()


def _with(tmp_path: Path, old: str, new: str) -> Path:
    assert old in SHIPPED
    path = tmp_path / "thresholds.yaml"
    path.write_text(SHIPPED.replace(old, new))
    return path


@pytest.mark.parametrize("old, new, key", [
    ("nproc: 2", "nproc: 100000", "ddp.nproc"),
    ("timeout_s: 300", "timeout_s: 1.0e+12", "ddp.timeout_s"),
    ("timeout_s: 300", "timeout_s: 0", "ddp.timeout_s"),
    ("steps: 3", "steps: 10000000", "ddp.steps"),
    ("steps: 3", "steps: 0", "ddp.steps"),
])
def test_out_of_range_ddp_settings_are_refused(tmp_path: Path, old: str, new: str, key: str) -> None:
    with pytest.raises(KnowledgeError, match=key.replace(".", r"\.")):
        load_thresholds(_with(tmp_path, old, new))


def test_shipped_values_load() -> None:
    th = load_thresholds()
    assert th.ddp.nproc == 2 and th.ddp.timeout_s == 300


def test_bounds_match_the_command_line() -> None:
    """One range for a value, whichever way it arrives."""
    import click

    from ascend_migrate.validate import thresholds
    from ascend_migrate.validate.cli import validate_command

    run = validate_command.commands["run"]
    params = {p.name: p.type for p in run.params if isinstance(p, click.Option)}
    assert (params["ddp_steps"].min, params["ddp_steps"].max) == thresholds.DDP_STEPS
    assert (params["ddp_timeout"].min, params["ddp_timeout"].max) == thresholds.DDP_TIMEOUT_S


@pytest.mark.parametrize("vopts", [
    {"ddp_steps": 10 ** 9}, {"ddp_timeout_s": 1e12}, {"ddp_steps": "5"},
    {"command": ["torchrun", "--nproc_per_node=5000", "train.py"]},
    {"ddp_command": ["torchrun", "--nproc-per-node", "5000", "train.py"]},
])
def test_replay_refuses_unbounded_validation_options(tmp_path: Path, vopts: dict) -> None:
    from ascend_migrate.replay import ReplayError, check_validation_options

    with pytest.raises(ReplayError, match="replay.json: validation.options"):
        check_validation_options(vopts)


def test_replay_refuses_a_skill_thresholds_file_before_writing(tmp_path: Path, project: Path) -> None:
    import json

    from .conftest import run_cli, snapshot

    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "manual.patch").write_text("")
    (skill / "thresholds.yaml").write_text(SHIPPED.replace("nproc: 2", "nproc: 100000"))
    (skill / "replay.json").write_text(json.dumps({
        "schema": "ascend-migrate/replay/1", "model": "m",
        "migrate": {"options": {"style": "transfer"}, "command": "ascend-migrate migrate . --write"},
        "manual_patch": {"file": "manual.patch", "files": [], "binary_files": [], "deleted_binary": []},
        "tree": {"sha256": "0" * 64, "excluded": [], "manifest": {}},
        "validation": {"thresholds_file": "thresholds.yaml", "options": {}},
    }))
    before = snapshot(project)
    proc = run_cli("replay", str(skill), str(project), "--device", "cpu")
    assert proc.returncode == 2, proc.stderr
    assert "ddp.nproc" in proc.stderr and "validation.thresholds_file" in proc.stderr
    assert snapshot(project) == before
