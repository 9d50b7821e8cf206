"""Nothing ends quietly: an entry that exits early, hangs, crashes or raises is a FAIL with a
message and a report, and capture never exits 0 without writing its golden file."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli
from vhelpers import write_tree

pytestmark = pytest.mark.needs_torch

MODEL = """
    import torch


    def train_steps(device, steps=2, seed=0):
        model = torch.nn.Linear(4, 1).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(8, 4).to(device)
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        {end}
        return losses
"""

ENDINGS = {
    "exits-0": ("import sys; print('done early'); sys.exit(0)", "sys.exit(0) before returning"),
    "os-exit": ("import os; print('bye'); os._exit(0)", "without returning a result"),
    "hangs": ("import time; print('waiting for data'); time.sleep(600)", "no output and no training step for 8 s"),
    "segfaults": ("import ctypes; print('about to crash', flush=True); ctypes.string_at(0)", "SIGSEGV"),
    "raises": ("raise RuntimeError('device-side assert triggered')", "raised RuntimeError: device-side assert triggered"),
}


def _project(root: Path, end: str) -> Path:
    return write_tree(root, {"validate_entries.py": MODEL.replace("{end}", end)})


def _idle(name: str) -> str:
    """A short no-progress limit for the hang, a lenient one for the rest (a loaded machine
    takes seconds to import torch, and prints nothing meanwhile)."""
    return "8" if name == "hangs" else "120"


def _invoke(*args: object):
    return CliRunner().invoke(cli, ["validate", *map(str, args)])


@pytest.fixture(scope="module")
def golden(tmp_path_factory) -> Path:
    root = _project(tmp_path_factory.mktemp("orig"), "pass")
    out = root.parent / "golden.pt"
    res = _invoke("capture", "validate_entries.py:train_steps", "--root", root, "-o", out, "--steps", "2")
    assert res.exit_code == 0, res.output
    return out


@pytest.mark.parametrize("name", sorted(ENDINGS))
def test_capture_never_exits_0_without_a_golden(tmp_path, name):
    end, expected = ENDINGS[name]
    root = _project(tmp_path / "p", end)
    out = tmp_path / "g.pt"
    res = _invoke("capture", "validate_entries.py:train_steps", "--root", root, "-o", out, "--steps", "2",
                  "--idle-timeout", _idle(name))
    assert res.exit_code == 1, res.output
    assert expected in res.output
    assert not out.exists()


@pytest.mark.parametrize("name", sorted(ENDINGS))
def test_validate_run_fails_with_a_report_that_says_how_it_ended(tmp_path, golden, name):
    end, expected = ENDINGS[name]
    root = _project(tmp_path / "p", end)
    env = tmp_path / "env.json"
    env.write_text("{}")
    res = _invoke("run", root, "--golden", golden, "--environment", env, "--no-ddp", "--idle-timeout", _idle(name))
    assert res.exit_code == 1, res.output
    report = json.loads((root / ".ascend-migrate" / "validation-report.json").read_text())
    assert report["verdict"] == "fail"
    item = next(i for i in report["items"] if i["id"] == "loss-curve")
    assert item["status"] == "fail" and expected in item["summary"]
    if name in ("exits-0", "hangs", "segfaults"):
        tail = [line for ev in item["evidence"] for line in ev.get("last_output", [])]
        said = {"exits-0": "done early", "hangs": "waiting for data", "segfaults": "about to crash"}[name]
        assert said in tail, item["evidence"]
    assert "verdict: FAIL" in res.output and expected in res.output


def test_credentials_do_not_reach_the_entry(tmp_path, monkeypatch, golden):
    monkeypatch.setenv("HF_TOKEN", "hf_secret_value")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws_secret_value")
    monkeypatch.setenv("ASCEND_VISIBLE_PLAIN", "kept")
    end = ("import os\n        assert 'HF_TOKEN' not in os.environ and 'AWS_SECRET_ACCESS_KEY' not in os.environ\n"
           "        assert os.environ['ASCEND_VISIBLE_PLAIN'] == 'kept'")
    root = _project(tmp_path / "p", end)
    res = _invoke("capture", "validate_entries.py:train_steps", "--root", root, "-o", tmp_path / "g.pt", "--steps", "2")
    assert res.exit_code == 0, res.output
