"""The agnostic port of three idioms that used to change what a CPU-only host runs, checked by
running the original and the port side by side here and comparing their losses bit for bit.

- a `device_type="cuda"` parameter default that reaches torch.autocast: the original's CUDA
  autocast is off without CUDA, so a port defaulting to the CPU would train in bf16 instead;
- `torch.cuda.amp.custom_fwd(cast_inputs=...)` / `custom_bwd` on an autograd function;
- a CUDA function chosen by a device test (`torch.cuda.synchronize if device_type == "cuda"
  else ...`), which the port must not leave pointing at torch.cuda once the test is true on NPU.
"""
import warnings

import pytest

from ascend_migrate.fix.rewrite import Options, rewrite_python, verify
from ascend_migrate.knowledge.base import load_knowledge

torch = pytest.importorskip("torch")

RECIPE = '''
import torch
import torch.nn.functional as F


class ScaledLinear(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w.t() * 0.5

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad @ w * 0.5, grad.t() @ x * 0.5


def step(model, head, x, y, opt, device_type="cuda", amp_dtype=torch.bfloat16):
    wait = torch.cuda.synchronize if device_type == "cuda" and torch.cuda.is_available() else (lambda: None)
    with torch.autocast(device_type=device_type, dtype=amp_dtype):
        hidden = model(x)
        logits = ScaledLinear.apply(hidden, head)
        loss = F.cross_entropy(logits.float(), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    wait()
    return loss, hidden.dtype


def train(steps=5):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(12, 24), torch.nn.GELU(), torch.nn.Linear(24, 16))
    head = torch.nn.Parameter(torch.randn(4, 16) * 0.1)
    opt = torch.optim.SGD([*model.parameters(), head], lr=0.05)
    x, y = torch.randn(20, 12), torch.randint(0, 4, (20,))
    losses, dtypes = [], []
    for _ in range(steps):
        loss, dtype = step(model, head, x, y, opt)
        losses.append(loss.item())
        dtypes.append(dtype)
    return losses, dtypes
'''


def _train(source: str) -> tuple:
    namespace: dict = {"__name__": "recipe"}
    exec(compile(source, "recipe.py", "exec"), namespace)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "CUDA is not available ... Disabling autocast"
        return namespace, namespace["train"]()


def test_port_of_the_recipe_trains_bit_identically_on_a_cpu_only_host():
    if torch.accelerator.is_available():
        pytest.skip("needs a host without an accelerator")
    kb = load_knowledge()
    opts = Options(style="agnostic")
    out = rewrite_python(kb, "recipe.py", RECIPE, opts)
    assert not out.error and not out.manual, out.manual
    assert "torch.cuda.amp" not in out.text and "torch.cuda.synchronize" not in out.text
    assert 'device_type=_accel_type or "cuda"' in out.text
    assert verify(kb, "recipe.py", out.text, opts, old_text=RECIPE) == ""
    _, original = _train(RECIPE)
    namespace, ported = _train(out.text)
    assert namespace["step"].__defaults__[0] == "cuda"  # the default still names CUDA here
    assert ported == original
    # Without CUDA the original's autocast was off: fp32 throughout (a port defaulting to the
    # CPU would have run CPU autocast in bf16 and lost this equality).
    assert set(original[1]) == {torch.float32}


def test_below_the_torch_floor_the_decorators_stay_and_say_why():
    kb = load_knowledge()
    out = rewrite_python(kb, "recipe.py", RECIPE, Options(style="agnostic", min_torch="2.3"))
    assert "@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)" in out.text
    notes = [c.message for c in out.manual if c.rule == "AM003"]
    assert len(notes) == 2
    assert all("needs torch >= 2.4, and --min-torch is 2.3" in n for n in notes)
