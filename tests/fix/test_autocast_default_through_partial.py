"""A parameter default that names CUDA and reaches autocast through functools.partial (the shape
of a public CLIP training library). The original, run on a CPU-only host, asks for CUDA autocast,
which PyTorch switches off there: full precision. Its agnostic port must train the same, not
switch CPU bf16 autocast on (which changed the step-0 loss before the partial was followed)."""
import pytest

from ascend_migrate.fix.rewrite import Options, rewrite_python
from ascend_migrate.knowledge.base import load_knowledge

torch = pytest.importorskip("torch")

KB = load_knowledge()

TRAINER = '''import warnings
from contextlib import suppress
from functools import partial

import torch


def get_autocast(precision, device_type="cuda"):
    if precision == "amp_bf16":
        return partial(torch.autocast, device_type=device_type, dtype=torch.bfloat16)
    return suppress


def train(steps=4):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(64, 16), torch.randint(0, 4, (64,))
    autocast = get_autocast("amp_bf16")
    losses = []
    for _ in range(steps):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "CUDA is not available ... Disabling autocast"
            with autocast():
                loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
'''


def _run(text: str) -> list:
    namespace: dict = {"__name__": "trainer"}
    exec(compile(text, "trainer.py", "exec"), namespace)
    return namespace["train"]()


@pytest.mark.skipif(torch.cuda.is_available(), reason="the contract checked here is the CPU-only host's")
def test_agnostic_port_trains_at_the_original_precision_on_a_cpu_host():
    port = rewrite_python(KB, "trainer.py", TRAINER, Options(style="agnostic")).text
    assert 'device_type=_accel_type or "cuda"' in port
    assert _run(port) == _run(TRAINER)  # bit-identical per-step losses
    # What the earlier rewrite (`_device_type`, "cpu" here) did: CPU bf16 autocast changes the losses.
    assert _run(port.replace('device_type=_accel_type or "cuda"', "device_type=_device_type")) != _run(TRAINER)
