"""The generated script validates its config and names the bad key."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.needs_torch  # runs torch


@pytest.mark.parametrize("override, message", [
    ("optim.lrr=1e-3", "unknown config key 'optim.lrr' (did you mean 'optim.lr'?)"),
    ("optim.lr=-1", "optim.lr must be > 0"),
    ("optim.lr=fast", "optim.lr must be int or float"),
    ("train.grad_accum_steps=0", "train.grad_accum_steps must be > 0"),
    ("model.dropout=1.5", "model.dropout must be in [0, 1)"),
    ("data.loop=forever", "data.loop must be one of epoch, iteration, got 'forever'"),
    ("precision.dtype=fp8", "precision.dtype must be one of auto, bf16, fp16, fp32"),
    ("data.pin_memory=3", "data.pin_memory must be bool"),
    ("train.max_steps=2.5", "train.max_steps must be int"),
    ("device=quantum:0", "device must be auto or a device such as npu:0 or cpu"),
    ("train.max_steps", "--set expects KEY=VALUE"),
])
def test_bad_values_are_named(train_mod, scaffold_dir, override, message):
    with pytest.raises(train_mod.ConfigError) as err:
        train_mod.load_config(scaffold_dir / "config.yaml", [override])
    assert message in str(err.value)


def test_unknown_section_key_in_file(train_mod, tmp_path):
    bad = tmp_path / "config.yaml"
    bad.write_text("optim:\n  lr: 0.1\n  momentum: 0.9\n", encoding="utf-8")
    with pytest.raises(train_mod.ConfigError, match="unknown config key 'optim.momentum'"):
        train_mod.load_config(bad)


def test_malformed_yaml_and_missing_file(train_mod, tmp_path):
    bad = tmp_path / "config.yaml"
    bad.write_text("optim: [unclosed\n", encoding="utf-8")
    with pytest.raises(train_mod.ConfigError, match="not valid YAML"):
        train_mod.load_config(bad)
    bad.write_text("- a\n- b\n", encoding="utf-8")
    with pytest.raises(train_mod.ConfigError, match="top level must be a mapping"):
        train_mod.load_config(bad)
    with pytest.raises(train_mod.ConfigError, match="not found"):
        train_mod.load_config(tmp_path / "missing.yaml")


def test_overrides_parse_yaml_values(train_mod, scaffold_dir):
    cfg = train_mod.load_config(scaffold_dir / "config.yaml",
                                ["optim.lr=1e-4", "data.loop=iteration", "schedule.total_steps=null",
                                 "train.clip_grad_norm=0", "data.pin_memory=false"])
    assert cfg["optim"]["lr"] == 1e-4
    assert cfg["data"]["loop"] == "iteration"
    assert cfg["schedule"]["total_steps"] is None
    assert cfg["train"]["clip_grad_norm"] == 0.0 and isinstance(cfg["train"]["clip_grad_norm"], float)
    assert cfg["data"]["pin_memory"] is False


def test_cli_reports_config_errors_with_exit_code_2(train_mod, scaffold_dir, capsys):
    code = train_mod.main(["--config", str(scaffold_dir / "config.yaml"), "--set", "optim.beta1=1.0"])
    assert code == 2
    assert "config error: optim.beta1 must be in [0, 1)" in capsys.readouterr().err


def test_backend_and_precision_follow_the_device(train_mod):
    import torch

    assert train_mod.backend_for("npu") == "hccl"
    assert train_mod.backend_for("cpu") == "gloo"
    assert train_mod.resolve_device("auto") == "cpu"  # no accelerator on the test host
    assert train_mod.resolve_device("cpu") == "cpu"
    with pytest.raises(train_mod.ConfigError, match="no NPU is usable"):
        train_mod.resolve_device("npu:0")
    cpu = torch.device("cpu")
    assert train_mod.resolve_precision("auto", cpu) == "fp32"
    assert train_mod.resolve_precision("bf16", cpu) == "bf16"
    assert train_mod.make_grad_scaler(cpu, "bf16") is None
    assert train_mod.make_grad_scaler(cpu, "fp16") is not None


def test_warmup_then_cosine(train_mod, tiny_cfg):
    cfg = tiny_cfg("train.max_steps=12", "schedule.warmup_steps=2", "schedule.min_lr_ratio=0.1")
    f = train_mod.warmup_cosine(cfg)
    assert [f(0), f(1)] == [0.5, 1.0]
    values = [f(s) for s in range(2, 12)]
    assert values == sorted(values, reverse=True)
    assert f(12) == pytest.approx(0.1)
    cfg = tiny_cfg("schedule.decay=constant")
    assert train_mod.warmup_cosine(cfg)(50) == 1.0
