"""`torch.backends.cudnn.deterministic = True` asks for reproducible runs; torch_npu never reads
it, so a port that kept the line alone would silently run non-deterministic kernels on Ascend.
The port adds, right after the switch, PyTorch's own switch (which torch_npu follows) and runs it
only on an NPU: on CUDA and CPU hosts the port does exactly what the original did."""
import types

import pytest

from ascend_migrate.fix.rewrite import Options, rewrite_python
from ascend_migrate.knowledge.base import load_knowledge

torch = pytest.importorskip("torch")

KB = load_knowledge()

TRAINER = '''import torch
import torch.backends.cudnn as cudnn


def seed_everything(seed, deterministic=True):
    torch.manual_seed(seed)
    cudnn.deterministic = deterministic
    cudnn.benchmark = not deterministic


def train(steps=5):
    seed_everything(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 8), torch.randn(32, 1)
    losses = []
    for _ in range(steps):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
'''


def _port(style: str, src: str) -> str:
    return rewrite_python(KB, "train.py", src, Options(style=style)).text


def _load(text: str) -> dict:
    namespace: dict = {"__name__": "ported_trainer"}
    exec(compile(text, "train.py", "exec"), namespace)
    return namespace


@pytest.fixture
def determinism_restored():
    saved = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
             torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)
    torch.use_deterministic_algorithms(False)
    yield
    torch.use_deterministic_algorithms(saved[0], warn_only=saved[1])
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = saved[2], saved[3]


@pytest.mark.parametrize("style", ["agnostic", "transfer"])
def test_on_a_cpu_host_the_port_trains_as_the_original_and_turns_nothing_on(style, determinism_restored):
    port = _port(style, TRAINER)
    assert "use_deterministic_algorithms(True, warn_only=True)" in port
    original = _load(TRAINER)["train"]()
    assert not torch.are_deterministic_algorithms_enabled()
    ported = _load(port)["train"]()
    assert ported == original  # bit-identical per-step losses
    assert not torch.are_deterministic_algorithms_enabled()  # the original never asked PyTorch for it


def test_agnostic_port_on_an_npu_host_turns_deterministic_algorithms_on(determinism_restored):
    module = _load(_port("agnostic", TRAINER))
    module["_accel_type"] = "npu"  # what the helper binds on a host whose accelerator is an NPU
    module["seed_everything"](0)
    assert torch.are_deterministic_algorithms_enabled()
    assert torch.is_deterministic_algorithms_warn_only_enabled()  # never raises where cuDNN's switch did not
    torch.use_deterministic_algorithms(False)
    module["seed_everything"](0, deterministic=False)
    assert not torch.are_deterministic_algorithms_enabled()  # off in the original: nothing turned on


def test_transfer_port_turns_it_on_once_torch_npu_is_loaded(determinism_restored, monkeypatch):
    module = _load(_port("transfer", TRAINER))
    module["seed_everything"](0)
    assert not torch.are_deterministic_algorithms_enabled()  # no torch_npu loaded: nothing happens
    monkeypatch.setattr(torch, "npu", types.SimpleNamespace(), raising=False)  # what importing torch_npu adds
    module["seed_everything"](0)
    assert torch.are_deterministic_algorithms_enabled()


@pytest.mark.parametrize("style", ["agnostic", "transfer"])
def test_a_switch_set_with_another_one_is_listed_not_left_silent(style):
    src = "import torch\n\n\ndef f(flag):\n    torch.backends.cudnn.deterministic = torch.backends.cudnn.benchmark = flag\n"
    result = rewrite_python(KB, "train.py", src, Options(style=style))
    assert result.text == src
    assert [(c.rule, c.start_line) for c in result.manual] == [("PR006", 5)]


@pytest.mark.parametrize("style", ["agnostic", "transfer"])
def test_a_second_pass_changes_nothing(style):
    port = _port(style, TRAINER)
    again = rewrite_python(KB, "train.py", port, Options(style=style))
    assert again.text == port
    assert not again.manual
