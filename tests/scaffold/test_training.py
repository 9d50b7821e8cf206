"""The generated script trains, resumes exactly, and accumulates gradients correctly (CPU)."""
from __future__ import annotations

import re

import pytest

torch = pytest.importorskip("torch")  # the oldest-Python run has no torch


def test_loss_decreases(train_mod, tiny_cfg):
    cfg = tiny_cfg("train.max_steps=30", "optim.lr=1e-2", "model.dropout=0.0")
    losses = train_mod.train(cfg, device="cpu", emit=None)["losses"]
    assert len(losses) == 30
    first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
    assert last < 0.8 * first, (first, last)


def _run(train_mod, scaffold_dir, out, *args):
    """What `python train.py --config config.yaml --output-dir OUT ARGS` does, in process."""
    argv = ["--config", str(scaffold_dir / "config.yaml"), "--output-dir", str(out),
            "--set", "data.num_samples=256", "--set", "data.micro_batch_size=16",
            "--set", "schedule.warmup_steps=2", *args]
    return train_mod.run(argv)


@pytest.mark.parametrize("extra", [
    # dropout on, fp32, resumes in the first epoch and crosses into the next (8 batches/epoch)
    ("--set", "data.loop=epoch", "--set", "data.num_samples=128"),
    ("--set", "data.loop=iteration", "--set", "precision.dtype=bf16"),
    ("--set", "precision.dtype=fp16", "--set", "train.grad_accum_steps=2"),  # GradScaler state
], ids=["epoch-fp32", "iteration-bf16", "fp16-scaler-accum"])
def test_resume_is_bit_identical(train_mod, scaffold_dir, tmp_path, capsys, extra):
    steps, k = 12, 5
    # The schedule length is fixed, so a run stopped at k follows the same lr curve.
    extra = (*extra, "--set", f"schedule.total_steps={steps}")
    full = _run(train_mod, scaffold_dir, tmp_path / "full", "--max-steps", str(steps), *extra)
    printed = capsys.readouterr().out
    assert printed.splitlines() == [f"step {i + 1} loss {x!r}" for i, x in enumerate(full["losses"])]

    first = _run(train_mod, scaffold_dir, tmp_path / "a", "--max-steps", str(k), *extra)
    ckpt = tmp_path / "a" / "checkpoints" / f"step_{k:08d}.pt"
    assert ckpt.is_file()
    second = _run(train_mod, scaffold_dir, tmp_path / "b", "--max-steps", str(steps),
                     "--resume", str(ckpt), *extra)
    assert first["losses"] + second["losses"] == full["losses"]  # exact float equality
    for (name, p), q in zip(full["model"].state_dict().items(), second["model"].state_dict().values()):
        assert torch.equal(p, q), name
    printed = capsys.readouterr().out
    assert re.findall(r"^step (\d+) loss", printed, re.M)[-(steps - k):] == [str(i) for i in range(k + 1, steps + 1)]


def test_checkpoint_contents_and_rotation(train_mod, scaffold_dir, tmp_path):
    out = tmp_path / "run"
    _run(train_mod, scaffold_dir, out, "--max-steps", "9", "--save-every", "2",
         "--set", "checkpoint.keep_last=2", "--set", "precision.dtype=fp16")
    ckpts = sorted(p.name for p in (out / "checkpoints").glob("*.pt"))
    assert ckpts == ["last.pt", "step_00000008.pt", "step_00000009.pt"]
    state = train_mod.load_checkpoint(out / "checkpoints" / "last.pt")
    assert state["step"] == 9
    assert {"model", "optimizer", "scheduler", "scaler", "rng", "config"} <= set(state)
    assert state["scaler"] and state["scaler"]["scale"] > 0
    assert state["scheduler"]["last_epoch"] == 9
    (rng,) = state["rng"]  # one rank
    assert {"python", "cpu"} <= set(rng)
    assert not any(p.name.endswith(".tmp") for p in (out / "checkpoints").iterdir())
    # resuming from the directory picks last.pt
    assert train_mod.load_checkpoint(out)["step"] == 9


def test_grad_accumulation_matches_a_larger_batch(train_mod, tiny_cfg):
    n, micro = 4, 8
    common = ("model.dropout=0.0", "train.max_steps=6", "data.loop=epoch", "train.clip_grad_norm=0.5")
    accumulated = train_mod.train(tiny_cfg(f"train.grad_accum_steps={n}", f"data.micro_batch_size={micro}", *common),
                                  device="cpu", emit=None)
    big = train_mod.train(tiny_cfg("train.grad_accum_steps=1", f"data.micro_batch_size={n * micro}", *common),
                          device="cpu", emit=None)
    assert accumulated["losses"] == pytest.approx(big["losses"], rel=1e-5, abs=1e-6)
    for (name, p), q in zip(accumulated["model"].named_parameters(), big["model"].parameters()):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6, msg=name)
    # the tolerance discriminates: stepping after every micro-batch ends somewhere else
    small = train_mod.train(tiny_cfg("train.grad_accum_steps=1", f"data.micro_batch_size={micro}", *common),
                            device="cpu", emit=None)
    assert not all(torch.allclose(p, q, rtol=1e-5, atol=1e-6)
                   for p, q in zip(small["model"].parameters(), big["model"].parameters()))


def test_profiler_hook_writes_a_trace(train_mod, scaffold_dir, tmp_path):
    out = tmp_path / "prof"
    _run(train_mod, scaffold_dir, out, "--max-steps", "4", "--set", "profiler.enabled=true",
         "--set", "profiler.wait=1", "--set", "profiler.warmup=1", "--set", "profiler.active=1")
    traces = list((out / "profile").glob("*.json*"))
    assert traces, list(out.rglob("*"))


def test_iteration_loop_samples_with_replacement_and_per_rank(train_mod):
    a = train_mod.BatchStream(10, 4, "iteration", seed=3, rank=0, world=2)
    b = train_mod.BatchStream(10, 4, "iteration", seed=3, rank=1, world=2)
    it_a, it_b = iter(a), iter(b)
    first_a = [next(it_a) for _ in range(50)]
    assert first_a != [next(it_b) for _ in range(50)]
    assert any(len(set(batch)) < len(batch) for batch in first_a)  # replacement
    resumed = iter(train_mod.BatchStream(10, 4, "iteration", seed=3, rank=0, world=2, start=20))
    assert [next(resumed) for _ in range(30)] == first_a[20:]


def test_epoch_loop_shards_across_ranks(train_mod):
    streams = [iter(train_mod.BatchStream(16, 2, "epoch", seed=0, rank=r, world=2)) for r in range(2)]
    epoch0 = [[i for _ in range(4) for i in next(s)] for s in streams]
    assert sorted(epoch0[0] + epoch0[1]) == list(range(16))  # disjoint shards covering the data
    again = iter(train_mod.BatchStream(16, 2, "epoch", seed=0, rank=0, world=2, start=3))
    assert next(again) == epoch0[0][6:8]


def test_resume_with_a_changed_data_order_warns(train_mod, scaffold_dir, tmp_path, caplog):
    _run(train_mod, scaffold_dir, tmp_path / "a", "--max-steps", "2")
    with caplog.at_level("WARNING", logger="train"):
        _run(train_mod, scaffold_dir, tmp_path / "b", "--max-steps", "3", "--set", "data.micro_batch_size=8",
             "--resume", str(tmp_path / "a" / "checkpoints" / "last.pt"))
    assert "resuming with changed data.micro_batch_size" in caplog.text
