"""bench/realworld.py --loss --standin: a recipe's transfer port runs on the npu stand-in and
its losses are compared with the original's on CPU, on a small project of ours."""
from __future__ import annotations

import importlib.util
import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.needs_torch

ROOT = Path(__file__).resolve().parents[2]

TRAIN = '''
    """Tiny classifier; trains on cuda when there is one."""
    import argparse

    import torch
    import torch.nn.functional as F

    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    device = args.device if args.device == "cpu" or torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).to(device)
    with open("device.txt", "w") as fh:
        fh.write(str(next(model.parameters()).device))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        x, y = torch.randn(32, 8).to(device), torch.randint(0, 3, (32,)).to(device)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
'''


def _load_harness():
    spec = importlib.util.spec_from_file_location("realworld_harness_standin", ROOT / "bench" / "realworld.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_transfer_port_of_a_recipe_runs_on_the_standin(npu_standin, tmp_path, monkeypatch):
    rw = _load_harness()
    repos = tmp_path / "repos"
    (repos / "toyrepo").mkdir(parents=True)
    (repos / "toyrepo" / "train.py").write_text(textwrap.dedent(TRAIN).lstrip())
    monkeypatch.setattr(rw, "RECIPES", {"toy-train": {
        "repo": "toyrepo", "cwd": ".", "script": "train.py", "pythonpath": [], "setup": None, "steps": 4,
        "standin": {"replace": {"--device=cpu": "--device=cuda"}}, "args": ["--device=cpu"]}})
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out, work = tmp_path / "r.json", tmp_path / "work"
    assert rw.main(["--repos", str(repos), "--out", str(out), "--work", str(work), "--loss", "--standin",
                    "--standin-build", str(npu_standin.build_dir), "--loss-python", sys.executable,
                    "--quiet"]) == 0
    [row] = json.loads(out.read_text())["loss"]
    assert row["status"] == "identical"  # agnostic port on CPU
    npu = row["transfer-npu"]
    assert npu["status"] == "stopped after 4 losses" and len(npu["losses"]) == 4
    assert row["standin_status"] == "identical"
    ran_on = work / "loss" / "toy-train" / "transfer-npu" / "tree" / "device.txt"
    assert ran_on.read_text() == "npu:0"
    assert (work / "loss" / "toy-train" / "original" / "tree" / "device.txt").read_text() == "cpu"
    assert "transfer port on the npu stand-in" in rw.loss_table([row])


LOADER_TRAIN = '''
    """Tiny classifier whose loader settings change with the device, as pytorch/examples' mnist does."""
    import torch
    import torch.nn.functional as F

    device = "cuda" if torch.cuda.is_available() else "cpu"
    loader_args = {"batch_size": 8}
    if device == "cuda":
        loader_args.update({"shuffle": True, "num_workers": 1, "pin_memory": True, "persistent_workers": True})
    torch.manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(64, 8), torch.randint(0, 3, (64,)))
    loader = torch.utils.data.DataLoader(data, **loader_args)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Dropout(0.2), torch.nn.Linear(16, 3)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = F.cross_entropy(model(x.to(device)), y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
'''


@pytest.mark.parametrize("forced", [False, True])
def test_loader_arguments_forced_on_every_side(npu_standin, tmp_path, monkeypatch, forced):
    """Without the recipe's `loader` the accelerator run shuffles and the CPU runs do not, so the
    losses part at step 0; with it every side builds its loaders alike and the losses agree."""
    rw = _load_harness()
    repos = tmp_path / "repos"
    (repos / "toyrepo").mkdir(parents=True)
    (repos / "toyrepo" / "train.py").write_text(textwrap.dedent(LOADER_TRAIN).lstrip())
    recipe = {"repo": "toyrepo", "cwd": ".", "script": "train.py", "pythonpath": [], "setup": None, "steps": 5,
              "standin": {}, "args": []}
    if forced:
        recipe["loader"] = {"shuffle": True, "num_workers": 1, "pin_memory": True, "persistent_workers": True}
    monkeypatch.setattr(rw, "RECIPES", {"toy-loader": recipe})
    monkeypatch.setenv("PYTHONPATH", str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out, work = tmp_path / "r.json", tmp_path / "work"
    assert rw.main(["--repos", str(repos), "--out", str(out), "--work", str(work), "--loss", "--standin",
                    "--standin-build", str(npu_standin.build_dir), "--loss-python", sys.executable,
                    "--quiet"]) == 0
    [row] = json.loads(out.read_text())["loss"]
    assert row["status"] == "identical"  # the agnostic port on CPU builds its loaders as the original does
    assert len(row["transfer-npu"]["losses"]) == 5
    if forced:
        assert row["standin_status"] == "identical"
    else:
        assert row["standin_status"] == "differs from step 0"
