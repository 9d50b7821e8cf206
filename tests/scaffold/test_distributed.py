"""The generated script under torchrun (two CPU processes, gloo), and `validate` on its tree."""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")  # the oldest-Python run has no torch

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (SRC, env.get("PYTHONPATH", "")) if p)
    names = [n for _, n in socket.if_nameindex()]
    if "lo" in names:
        env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    return env


@pytest.mark.torchrun
def test_torchrun_two_processes_train_and_agree(scaffold_dir, tmp_path):
    # A launcher that runs exactly what `python train.py ARGS` runs, then saves this rank's
    # weights so the test can compare the ranks from outside.
    driver = tmp_path / "run_rank.py"
    driver.write_text(textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(scaffold_dir)!r})
        import torch
        import train

        train.setup_logging()
        result = train.run(sys.argv[1:])
        torch.save(result["model"].state_dict(), os.path.join({str(tmp_path)!r}, f"rank{{os.environ['RANK']}}.pt"))
    """), encoding="utf-8")
    out = tmp_path / "out"
    steps = 6
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc_per_node=2",
           "--master_addr=127.0.0.1", f"--master_port={_free_port()}", str(driver),
           "--config", str(scaffold_dir / "config.yaml"), "--max-steps", str(steps),
           "--output-dir", str(out), "--save-every", "3",
           "--set", "data.num_samples=256", "--set", "data.micro_batch_size=8",
           "--set", "train.grad_accum_steps=2"]  # no_sync on the first micro-batch
    proc = subprocess.run(cmd, cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    # rank 0 alone prints, one line per optimizer step, in full precision
    lines = re.findall(r"^step (\d+) loss (\S+)$", proc.stdout, re.M)
    assert [int(n) for n, _ in lines] == list(range(1, steps + 1)), proc.stdout
    assert all(repr(float(x)) == x for _, x in lines)
    assert "world size 2" in proc.stderr and "device cpu" in proc.stderr

    ranks = [torch.load(tmp_path / f"rank{r}.pt") for r in range(2)]
    assert ranks[0].keys() == ranks[1].keys()
    for name in ranks[0]:
        assert torch.equal(ranks[0][name], ranks[1][name]), name

    # rank 0 wrote the checkpoints, with both ranks' RNG states
    state = torch.load(out / "checkpoints" / "last.pt", weights_only=False)
    assert state["step"] == steps and len(state["rng"]) == 2
    assert not torch.equal(state["rng"][0]["cpu"], state["rng"][1]["cpu"])  # per-rank dropout streams
    assert sorted(p.name for p in (out / "checkpoints").glob("step_*.pt")) == ["step_00000003.pt", "step_00000006.pt"]
    for name, tensor in state["model"].items():
        assert torch.equal(tensor, ranks[0][name]), name


@pytest.mark.torchrun
def test_validate_passes_on_the_scaffold(scaffold_dir, tmp_path):
    """Capture on the CPU, then `validate` the tree on the CPU: static items, golden outputs,
    loss curve and the two-process DDP smoke run of train_steps."""
    from ascend_migrate.validate.dynamic import capture
    from ascend_migrate.validate.runner import ValidateOptions, validate_project

    golden = tmp_path / "golden.pt"
    capture("train.py:train_steps", scaffold_dir, "cpu", golden, seed=0, steps=3)
    report = validate_project(scaffold_dir, ValidateOptions(device="cpu", golden=golden, environment={},
                                                            ddp_steps=2, ddp_timeout_s=240))
    items = {i["id"]: i for i in report["items"]}
    for item_id in ("golden-outputs", "loss-curve", "ddp-smoke"):
        assert items[item_id]["status"] == "pass", (item_id, items[item_id]["summary"], items[item_id]["evidence"])
    assert report["verdict"] == "pass", report["reasons"]
    assert not [i["id"] for i in report["items"] if i["status"] == "fail"]
    assert "bit-identical" in items["ddp-smoke"]["summary"]
