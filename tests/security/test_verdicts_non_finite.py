"""Verdicts must not pass on NaN/inf: losses, outputs, thresholds and captured goldens."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from ascend_migrate.knowledge.loader import KnowledgeError
from ascend_migrate.validate.metrics import compare_losses, compare_output
from ascend_migrate.validate.thresholds import THRESHOLDS_FILE, load_thresholds

from .conftest import run_cli

INF = math.inf


@pytest.fixture
def thresholds():
    return load_thresholds()


def test_all_infinite_loss_curve_fails_against_an_all_infinite_golden(thresholds) -> None:
    result = compare_losses([INF, INF, INF], [INF, INF, INF], thresholds.loss_tol("fp32"))
    assert result.status == "hard-fail" and result.first_bad_step == 0
    assert "not finite" in result.message


def test_plus_inf_against_minus_inf_fails(thresholds) -> None:
    result = compare_losses([1.0, INF], [1.0, -INF], thresholds.loss_tol("fp32"))
    assert result.status == "hard-fail" and result.first_bad_step == 1


def test_nan_loss_against_nan_golden_fails(thresholds) -> None:
    assert compare_losses([math.nan], [math.nan], thresholds.loss_tol("fp32")).status == "hard-fail"


def test_finite_curve_still_passes(thresholds) -> None:  # the control: the fix does not fail everything
    assert compare_losses([2.0, 1.5], [2.0, 1.5], thresholds.loss_tol("fp32")).status == "pass"


@pytest.mark.needs_torch
def test_infinite_outputs_fail_even_with_the_nan_inf_hard_limit_off(tmp_path: Path) -> None:
    import torch

    text = THRESHOLDS_FILE.read_text(encoding="utf-8").replace("nan_inf: true", "nan_inf: false")
    assert "nan_inf: false" in text
    custom = tmp_path / "t.yaml"
    custom.write_text(text, encoding="utf-8")
    loose = load_thresholds(custom)
    inf = torch.full((4,), INF)
    result = compare_output("logits", inf, inf.clone(), loose)
    assert result.status == "fail" and "non-finite" in result.failures[0]
    mixed = compare_output("logits", torch.tensor([INF, 1.0]), torch.tensor([-INF, 1.0]), loose)
    assert not mixed.passed


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", ".NaN"])
def test_thresholds_with_infinite_or_nan_limits_are_refused(tmp_path: Path, value: str) -> None:
    text = THRESHOLDS_FILE.read_text(encoding="utf-8")
    assert "rel_err: 1.0e-5" in text
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("rel_err: 1.0e-5", f"rel_err: {value}", 1), encoding="utf-8")
    with pytest.raises(KnowledgeError, match="finite"):
        load_thresholds(bad)


def test_thresholds_option_with_inf_exits_2(tmp_path: Path, project: Path) -> None:
    text = THRESHOLDS_FILE.read_text(encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("{rtol: 1.0e-4,", "{rtol: .inf,", 1), encoding="utf-8")
    assert ".inf" in bad.read_text()
    proc = run_cli("validate", "run", str(project), "--thresholds", str(bad), "--no-ddp")
    assert proc.returncode == 2 and "finite" in proc.stderr, proc.stderr


ENTRY = '''import torch


def train_steps(device, steps=3, seed=0):
    w = torch.nn.Parameter(torch.ones(2, device=device))
    losses = []
    for _ in range(steps):
        loss = (w * float("inf")).sum()
        losses.append(loss.item())
    return {"losses": losses}
'''


@pytest.mark.needs_torch
def test_capture_refuses_infinite_losses(tmp_path: Path) -> None:
    (tmp_path / "diverge.py").write_text(ENTRY)
    golden = tmp_path / "golden.pt"
    proc = run_cli("validate", "capture", "diverge.py:train_steps", "--root", str(tmp_path), "-o", str(golden),
                   "--steps", "3", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "not finite" in errors[0], proc.stderr
    assert not golden.exists() and not list(tmp_path.glob("golden.pt*"))
