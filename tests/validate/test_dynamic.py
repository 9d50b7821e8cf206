"""Acceptance for the numbers, on CPU: self-compare, bf16 autocast, a perturbed weight, an
injected NaN, a drifting loss curve."""
from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")  # the oldest-Python run has no torch

from ascend_migrate.validate.dynamic import capture, compare
from ascend_migrate.validate.entry import EntryError, run_entry
from ascend_migrate.validate.golden import FORMAT, GoldenError, load_golden

from vhelpers import TINY


@pytest.fixture(scope="module")
def model_golden(tmp_path_factory):
    path = tmp_path_factory.mktemp("golden") / "model.pt"
    capture("tiny_model.py:model_entry", TINY, "cpu", path, seed=7)
    return path


@pytest.fixture(scope="module")
def train_golden(tmp_path_factory):
    path = tmp_path_factory.mktemp("golden") / "train.pt"
    capture("tiny_model.py:train_steps", TINY, "cpu", path, seed=3, steps=6)
    return path


def test_golden_file_is_portable(model_golden):
    raw = torch.load(model_golden, map_location="cpu", weights_only=True)
    assert raw["format"] == FORMAT
    meta = json.loads(raw["meta"])
    assert meta["device"] == "cpu" and meta["seed"] == 7 and meta["dtype"] == "fp32"
    assert meta["versions"]["torch"] == torch.__version__
    assert set(meta["outputs"]) == {"output.features", "output.logits"}
    assert all(t.device.type == "cpu" for t in raw["outputs"].values())


def test_model_compared_with_its_own_capture_passes(model_golden, thresholds):
    result = compare(model_golden, TINY, "cpu", thresholds)
    assert result.status == "pass", result.failures()
    assert all(r.metrics.max_abs == 0.0 for r in result.outputs)


def test_bf16_autocast_passes_bf16_and_fails_fp32_thresholds(model_golden, thresholds):
    bf16 = compare(model_golden, TINY, "cpu", thresholds, autocast="bf16")
    assert bf16.dtype == "bf16"
    assert bf16.status == "pass", bf16.failures()
    assert any(r.metrics.max_abs > 0 for r in bf16.outputs)  # it really ran in bf16
    fp32 = compare(model_golden, TINY, "cpu", thresholds, autocast="bf16", dtype="fp32")
    assert fp32.status == "fail"
    assert any("max_abs" in m and "(fp32)" in m for m in fp32.failures())


def test_perturbed_weight_fails_naming_output_and_metric(model_golden, thresholds, monkeypatch):
    monkeypatch.setenv("TINY_PERTURB", "weight")
    result = compare(model_golden, TINY, "cpu", thresholds)
    assert result.status == "fail"
    by_name = {r.name: r for r in result.outputs}
    assert by_name["output.features"].status == "pass"  # the head's weight does not touch features
    assert by_name["output.logits"].status == "fail"
    assert any(m.startswith("output 'output.logits': max_abs ") for m in result.failures())


def test_injected_nan_fails_hard(model_golden, thresholds, monkeypatch):
    monkeypatch.setenv("TINY_PERTURB", "nan")
    result = compare(model_golden, TINY, "cpu", thresholds)
    logits = {r.name: r for r in result.outputs}["output.logits"]
    assert result.status == "fail" and logits.status == "hard-fail"
    assert "nan_inf" in logits.failures[0]


def test_loss_curve_self_compare_and_drift(train_golden, thresholds, monkeypatch):
    golden = load_golden(train_golden)
    assert len(golden.losses) == 6 and golden.meta["kind"] == "train" and golden.meta["steps"] == 6
    assert compare(train_golden, TINY, "cpu", thresholds).status == "pass"
    monkeypatch.setenv("TINY_DRIFT_FROM", "4")
    result = compare(train_golden, TINY, "cpu", thresholds)
    assert result.status == "fail"
    assert result.loss.first_bad_step == 4
    assert "loss diverges at step 4" in result.loss.message


def test_entry_errors_are_clear(tmp_path):
    (tmp_path / "m.py").write_text("def bad(device, other):\n    return 1\ndef odd(device):\n    return 'x'\n")
    with pytest.raises(EntryError, match="'other' has no default"):
        run_entry("m.py:bad", tmp_path, "cpu")
    with pytest.raises(EntryError, match="must return"):
        run_entry("m.py:odd", tmp_path, "cpu")
    with pytest.raises(EntryError, match="no function"):
        run_entry("m.py:missing", tmp_path, "cpu")
    with pytest.raises(EntryError, match="invalid entry"):
        run_entry("m.py", tmp_path, "cpu")


def test_not_a_golden_file(tmp_path):
    bad = tmp_path / "x.pt"
    bad.write_bytes(b"nope")
    with pytest.raises(GoldenError):
        load_golden(bad)


def test_project_modules_do_not_leak(tmp_path):
    for name, value in (("a", 1.0), ("b", 2.0)):
        d = tmp_path / name
        d.mkdir()
        (d / "helper.py").write_text(f"VALUE = {value}\n")
        (d / "e.py").write_text("import helper\ndef run(device):\n    return [helper.VALUE]\n")
    assert run_entry("e.py:run", tmp_path / "a", "cpu").losses == [1.0]
    assert run_entry("e.py:run", tmp_path / "b", "cpu").losses == [2.0]
