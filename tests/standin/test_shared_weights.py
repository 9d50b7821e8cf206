"""Weights shared between modules stay shared when a model moves to the npu stand-in.

nanoGPT ties its token embedding to its output layer; `nn.Module.to()` keeps that tie only when
torch says CPU and device tensors may share a TensorImpl. If the stand-in answered no (torch's
default for a PrivateUse1 backend), every tied model would train two separate weights on npu
and its losses would part from the original's after the first optimizer step.
"""
from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.needs_torch

SCRIPT = '''
import json, sys
import torch
import torch_npu  # noqa: F401  (the stand-in)


def train(device):
    torch.manual_seed(0)
    emb = torch.nn.Embedding(10, 4)
    head = torch.nn.Linear(4, 10, bias=False)
    emb.weight = head.weight
    model = torch.nn.Sequential(emb, head).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    idx = torch.tensor([[1, 2, 3, 1]], device=device)
    losses = []
    for _ in range(3):
        loss = torch.nn.functional.cross_entropy(model(idx).flatten(0, 1), idx.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item().hex())
    return {"tied": model[0].weight is model[1].weight, "losses": losses,
            "compatible": torch._has_compatible_shallow_copy_type(torch.zeros(1), torch.zeros(1, device=device))}


json.dump({"cpu": train("cpu"), "npu": train("npu")}, sys.stdout)
'''


def test_tied_weights_stay_tied_and_train_as_on_cpu(npu_standin, tmp_path):
    script = tmp_path / "tied.py"
    script.write_text(SCRIPT)
    ran = npu_standin.run([str(script)], cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-3000:]
    got = json.loads(ran.stdout)
    assert got["npu"]["compatible"] is True
    assert got["npu"]["tied"] is True
    assert got["npu"]["losses"] == got["cpu"]["losses"]
