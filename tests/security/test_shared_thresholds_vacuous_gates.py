"""A shared skill's thresholds cannot turn a numerical gate into one that passes everything.

`hard.max_abs: 1e308`, `cosine_min: 0`, a relative tolerance of 1000, a huge `small_value`
(the floor of the relative error's denominator) or an output gate with every comparison unset
would make a replay's validation pass whatever the port computes. Thresholds that come with a
skill are held to bounds that any real precision mode stays within; a person's own
`--thresholds` file is not.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ascend_migrate.knowledge.loader import KnowledgeError
from ascend_migrate.validate.thresholds import THRESHOLDS_FILE, load_thresholds

from .conftest import run_cli, snapshot

SHIPPED = THRESHOLDS_FILE.read_text()


def _with(tmp_path: Path, old: str, new: str) -> Path:
    assert old in SHIPPED, old
    path = tmp_path / "thresholds.yaml"
    path.write_text(SHIPPED.replace(old, new, 1))
    return path


CASES = [
    ("  max_abs: 1.0\n", "  max_abs: 1.0e+308\n", "hard.max_abs"),
    ("  cosine_min: 0.9\n", "  cosine_min: 0\n", "hard.cosine_min"),
    ("    cosine_min: 0.99\n", "    cosine_min: 0.0\n", "outputs.fp32.cosine_min"),
    ("    rel_err: 1.0e-5\n", "    rel_err: 1000\n", "outputs.fp32.rel_err"),
    ("    max_abs: 1.0e-3\n", "    max_abs: 1.0e+30\n", "outputs.fp32.max_abs"),
    ("    small_value: 9.5367431640625e-07   # 2^-20\n", "    small_value: 1.0e+30\n", "outputs.fp32.small_value"),
    ("  fp32: {rtol: 1.0e-4, atol: 1.0e-6}", "  fp32: {rtol: 1.0e+9, atol: 1.0e-6}", "loss.fp32.rtol"),
    ("  fp32: {rtol: 1.0e-4, atol: 1.0e-6}", "  fp32: {rtol: 1.0e-4, atol: 1.0e+9}", "loss.fp32.atol"),
    ("  param_rtol: 1.0e-6", "  param_rtol: 100", "ddp.param_rtol"),
    ("  nan_inf: true", "  nan_inf: false", "hard.nan_inf"),
    ("    cosine_min: 0.99\n    max_abs: 1.0e-3\n    rel_err: 1.0e-5\n",
     "    cosine_min: null\n    max_abs: null\n    rel_err: null\n", "outputs.fp32"),
]


@pytest.mark.parametrize("old, new, key", CASES)
def test_vacuous_gates_from_a_shared_skill_are_refused(tmp_path: Path, old: str, new: str, key: str) -> None:
    path = _with(tmp_path, old, new)
    with pytest.raises(KnowledgeError, match=key.replace(".", r"\.")):
        load_thresholds(path, shared=True)
    load_thresholds(path)  # a person's own file may set what it likes


def test_shipped_thresholds_are_within_the_shared_bounds() -> None:
    load_thresholds(shared=True)


def test_replay_refuses_such_a_skill_before_writing(tmp_path: Path, project: Path) -> None:
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "manual.patch").write_text("")
    (skill / "thresholds.yaml").write_text(SHIPPED.replace("  max_abs: 1.0\n", "  max_abs: 1.0e+308\n", 1))
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
    assert "hard.max_abs" in proc.stderr and "validation.thresholds_file" in proc.stderr
    assert snapshot(project) == before
