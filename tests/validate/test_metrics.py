from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")  # the oldest-Python run has no torch

from ascend_migrate.validate.metrics import compare_losses, compare_output, compare_outputs, tensor_metrics


def test_identical_tensors(thresholds):
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(0))
    r = compare_output("y", x, x.clone(), thresholds)
    assert r.status == "pass"
    assert math.isclose(r.metrics.cosine, 1.0, rel_tol=1e-6) and r.metrics.max_abs == 0.0 and r.metrics.rmse == 0.0


def test_metric_values():
    g = torch.tensor([1.0, 2.0, 0.0, -4.0])
    t = torch.tensor([1.1, 2.0, 0.0, -4.0])
    m = tensor_metrics(t, g, small_value=1e-3)
    assert math.isclose(m.max_abs, 0.1, rel_tol=1e-6)
    assert math.isclose(m.rel_err, 0.1 / 4, rel_tol=1e-6)
    assert math.isclose(m.max_rel, 0.1, rel_tol=1e-6)
    assert math.isclose(m.mean_rel, 0.1 / 4, rel_tol=1e-6)
    assert math.isclose(m.rmse, math.sqrt(0.01 / 4), rel_tol=1e-6)
    assert 0.99 < m.cosine < 1.0


def test_zero_and_empty_tensors(thresholds):
    z = torch.zeros(3)
    assert compare_output("z", z, z.clone(), thresholds).status == "pass"
    assert compare_output("e", torch.empty(0), torch.empty(0), thresholds).status == "pass"
    r = compare_output("z", torch.ones(3) * 1e-2, z, thresholds)
    assert r.status == "hard-fail" and "cosine 0 < 0.9" in r.failures[0]


def test_nan_is_a_hard_failure(thresholds):
    g = torch.randn(10)
    t = g.clone()
    t[3] = float("inf")
    r = compare_output("logits", t, g, thresholds)
    assert r.status == "hard-fail"
    assert "output 'logits': nan_inf" in r.failures[0]
    assert r.metrics.target_nan_inf == 1


def test_shape_mismatch_and_missing_outputs(thresholds):
    res = compare_outputs({"a": torch.zeros(2, 3), "extra": torch.zeros(1)}, {"a": torch.zeros(3, 2), "b": torch.zeros(1)},
                          thresholds)
    status = {r.name: r.status for r in res}
    assert status == {"a": "unmatched", "b": "unmatched", "extra": "unmatched"}


def test_integer_outputs_compare_exactly(thresholds):
    g = torch.tensor([1, 2, 3])
    assert compare_output("idx", g.clone(), g, thresholds).status == "pass"
    r = compare_output("idx", torch.tensor([1, 2, 4]), g, thresholds)
    assert r.status == "fail" and r.dtype == "exact" and "mismatches 1" in r.failures[0]


def test_half_outputs_use_half_thresholds(thresholds):
    g = torch.randn(64)
    t = g.to(torch.bfloat16)
    assert compare_output("y", t, g, thresholds).dtype == "bf16"
    assert compare_output("y", t, g, thresholds).status == "pass"
    assert compare_output("y", t, g, thresholds, dtype="fp32").status == "fail"


def test_losses(thresholds):
    tol = thresholds.loss_tol("fp32")
    golden = [2.0, 1.5, 1.2, 1.0]
    assert compare_losses(golden, golden, tol).status == "pass"
    drift = [2.0, 1.5, 1.3, 1.2]
    r = compare_losses(drift, golden, tol)
    assert r.status == "fail" and r.first_bad_step == 2 and "step 2" in r.message
    r = compare_losses([2.0, float("nan"), 1.2, 1.0], golden, tol)
    assert r.status == "hard-fail" and r.first_bad_step == 1
    r = compare_losses([2.0, 1.5], golden, tol)
    assert r.status == "fail" and "2 step(s)" in r.message
