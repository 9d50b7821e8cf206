"""The agnostic port of a DDP launcher's `torch.cuda.set_device(...)` on a host without an
accelerator: the original never ran there, and the port must not stop there either (a public
trainer's two-process check failed with "Accelerator expected" before the call was guarded)."""
from __future__ import annotations

import pytest

from ascend_migrate.fix.rewrite import Options, rewrite_python
from ascend_migrate.knowledge.base import load_knowledge

SOURCE = '''import os
import torch

local_rank = int(os.environ.get("LOCAL_RANK", 0))
device = f"cuda:{local_rank}"
torch.cuda.set_device(device)
'''


def test_set_device_is_called_only_with_an_accelerator():
    out = rewrite_python(load_knowledge(), "train.py", SOURCE, Options(style="agnostic"))
    assert "torch.accelerator.set_device_index(device) if _accel_type else None" in out.text, out.text
    assert not out.manual


@pytest.mark.needs_torch
def test_the_port_runs_on_a_cpu_only_host():
    pytest.importorskip("torch")
    out = rewrite_python(load_knowledge(), "train.py", SOURCE, Options(style="agnostic"))
    scope: dict = {}
    exec(compile(out.text, "train.py", "exec"), scope)  # a CUDA-less torch: no accelerator
    assert scope["device"] == "cpu:0"
