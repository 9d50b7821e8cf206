"""A transfer-style port imports torch_npu without a guard (its contract: run on an Ascend NPU).
On a host without torch_npu, validation fails and says what to do instead of a bare import error."""
from __future__ import annotations

import importlib.util

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.fix.api import migrate
from ascend_migrate.validate.entry import TORCH_NPU_MISSING, EntryError, load_entry

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch_npu") is not None,
                                reason="torch_npu is installed here")

TRAIN = '''import torch

device = "cuda" if torch.cuda.is_available() else "cpu"


def train_steps(device="cpu", steps=2, seed=0):
    torch.manual_seed(seed)
    layer = torch.nn.Linear(4, 2).to(device)
    return {"outputs": layer(torch.ones(3, 4, device=device)).detach()}


if __name__ == "__main__":
    print(train_steps(device))
'''


@pytest.fixture()
def ported(tmp_path):
    original = tmp_path / "original"
    original.mkdir()
    (original / "train.py").write_text(TRAIN)
    port = tmp_path / "port"
    migrate(original, style="transfer", output=port)
    assert (port / "train.py").read_text().startswith("import torch_npu\n")
    return original, port


def test_loading_the_entry_names_the_cause_and_the_two_ways_out(ported):
    _, port = ported
    with pytest.raises(EntryError) as info:
        load_entry("train.py:train_steps", port)
    message = str(info.value)
    assert "No module named 'torch_npu'" in message and TORCH_NPU_MISSING in message
    assert "--style agnostic" in message and "npu:0" in message


@pytest.mark.needs_torch
def test_validate_on_cpu_fails_with_the_advice(ported, tmp_path):
    original, port = ported
    golden = tmp_path / "golden.pt"
    runner = CliRunner()
    res = runner.invoke(cli, ["validate", "capture", "train.py:train_steps", "--root", str(original),
                              "-o", str(golden), "--steps", "2"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(cli, ["validate", "run", str(port), "--device", "cpu", "--golden", str(golden)])
    assert res.exit_code == 1
    assert "golden-outputs" in res.output and "--style agnostic" in res.output

    agnostic = tmp_path / "agnostic"
    migrate(original, style="agnostic", output=agnostic)
    res = runner.invoke(cli, ["validate", "run", str(agnostic), "--device", "cpu", "--golden", str(golden)])
    golden_line = next(line for line in res.output.splitlines() if "golden-outputs" in line)
    assert golden_line.split()[0] == "PASS" and "No module named" not in res.output
