"""The agnostic style's contract, checked by running code on this CPU-only host.

On a host without an accelerator the port must do exactly what the original did there: the
same code paths, dtypes and losses. The original below switches CUDA-only paths on through the
idioms real training code uses (a device-type membership test, torch.cuda.amp, a table keyed by
device type, cache and memory calls); on the CPU all of them are off, and must stay off.
"""
import ast

import pytest

from ascend_migrate.fix.rewrite import HELPER_NAMES, Options, rewrite_python, unbound_uses, verify
from ascend_migrate.knowledge.base import load_knowledge

torch = pytest.importorskip("torch")

TRAINER = '''
import torch
import torch.nn.functional as F

FUSED = {"cpu": False, "cuda": True}


def train(device_name, steps=6):
    torch.manual_seed(0)
    device = torch.device(device_name)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    use_amp = device.type in ('cuda',)
    scaler = torch.cuda.amp.GradScaler(enabled=True)
    x = torch.randn(32, 8)
    y = torch.randint(0, 3, (32,))
    losses, dtypes = [], []
    for _ in range(steps):
        with torch.cuda.amp.autocast():
            out = model(x.to(device))
            loss = F.cross_entropy(out, y.to(device))
        dtypes.append(out.dtype)
        opt.zero_grad()
        if use_amp or device.type == "cuda" or 'cuda' in device_name:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        torch.cuda.empty_cache()
        losses.append(loss.item())
    used = torch.cuda.memory_allocated()
    return losses, dtypes, FUSED.get(device.type, False), scaler.is_enabled(), used
'''


def _run(source: str) -> tuple:
    namespace: dict = {"__name__": "trainer"}
    exec(compile(source, "trainer.py", "exec"), namespace)
    return namespace, namespace["train"]("cpu")


def test_port_reproduces_the_original_on_a_cpu_only_host():
    if torch.accelerator.is_available():
        pytest.skip("needs a host without an accelerator")
    kb = load_knowledge()
    out = rewrite_python(kb, "trainer.py", TRAINER, Options(style="agnostic"))
    assert not out.error and out.text != TRAINER
    assert "torch.cuda.amp" not in out.text and "torch.cuda.empty_cache" not in out.text
    assert verify(kb, "trainer.py", out.text, Options(style="agnostic"), old_text=TRAINER) == ""
    _, original = _run(TRAINER)
    namespace, ported = _run(out.text)
    assert namespace["_accel_type"] is None and namespace["_device_type"] == "cpu"
    assert ported == original  # losses bit for bit, fp32 outputs, table lookup, scaler off, 0 bytes
    assert original[1][0] == torch.float32 and original[3] is False


def test_helper_names_are_bound_before_module_level_use():
    kb = load_knowledge()
    source = '"""Doc."""\nimport sys\nsys.path.insert(0, ".")\ntry:\n    import torch\nexcept ImportError:\n' \
             '    torch = None\nDEVICE = torch.device("cuda")\n'
    out = rewrite_python(kb, "a.py", source, Options(style="agnostic"))
    tree = ast.parse(out.text)
    helper = next(i for i, s in enumerate(tree.body) if isinstance(s, ast.Assign) and s.targets[0].id == "_accel_type")
    assert isinstance(tree.body[helper - 1], ast.Try)  # right after the statement that binds torch
    assert unbound_uses(out.text, ("torch", *HELPER_NAMES)) == {}


def test_a_module_reading_a_helper_name_before_binding_it_is_refused():
    kb = load_knowledge()
    original = "import torch\nx = 1\n"
    broken = 'import torch\nDEVICE = torch.device(_device_type)\n_accel_type = None\n_device_type = "cpu"\n'
    reason = verify(kb, "a.py", broken, Options(style="agnostic"), old_text=original)
    assert reason == "rewritten code reads `_device_type` before binding it (line 2); not written"
    assert unbound_uses("def f():\n    return _accel_type\n", HELPER_NAMES) == {"_accel_type": 2}
    assert unbound_uses("def f():\n    return _accel_type\n_accel_type = None\n", HELPER_NAMES) == {}


def test_a_rewrite_that_does_not_compile_is_refused():
    kb = load_knowledge()
    reason = verify(kb, "a.py", "def f():\n    nonlocal x\n", Options(style="agnostic"), old_text="x = 1\n")
    assert reason.startswith("rewritten code does not compile")


def test_verification_reuses_the_first_pass_coverage(monkeypatch, tmp_path):
    """The second (idempotency) pass sees the same torch_npu coverage data as the first."""
    from ascend_migrate.fix import migrate as mig
    from ascend_migrate.fix import rewrite as rw

    kb = load_knowledge()
    coverage = object()  # unreadable as coverage: rules fall back to their defaults
    seen = []
    real = rw.rewrite_python
    monkeypatch.setattr(rw, "rewrite_python", lambda *a, **k: seen.append(a[4]) or real(*a, **k))
    assert rw.verify(kb, "a.py", "import torch\n", Options(style="agnostic"), coverage=coverage) == ""
    assert seen == [coverage]

    handed = []
    real_verify = mig.verify
    monkeypatch.setattr(mig, "verify", lambda *a, **k: handed.append(a[6]) or real_verify(*a, **k))
    monkeypatch.setattr("ascend_migrate.knowledge.coverage.load_coverage", lambda version: coverage)
    (tmp_path / "run.py").write_text("import torch\nx = torch.ones(2).cuda()\n")
    from ascend_migrate.scan import api

    real_scan = api.scan
    monkeypatch.setattr(mig, "scan", lambda *a, **k: _with_version(real_scan(*a, **k)))
    mig.plan(tmp_path, Options(style="agnostic"))
    assert handed == [coverage]


def _with_version(result):
    result.torch_npu_version = "2.13.0"
    return result
