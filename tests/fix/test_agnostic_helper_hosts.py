"""The agnostic port's `_accel_type` on hosts the original ran on. Code that only knew CUDA ran
on the CPU of a Mac (MPS) or an Intel GPU host (XPU); its port must too, unless the module's own
code names that accelerator. On CUDA and NPU hosts it is the accelerator."""
import types

import pytest

from ascend_migrate.fix.rewrite import Options, accelerators_used, device_type_helper, rewrite_python
from ascend_migrate.knowledge.base import load_knowledge

KB = load_knowledge()


def _fake_torch(accelerator):
    """A torch stand-in whose accelerator API (2.6+) and device modules (older) report `accelerator`."""
    current = types.SimpleNamespace(type=accelerator) if accelerator else None
    api = types.SimpleNamespace(is_available=lambda: current is not None, current_accelerator=lambda: current)
    modules = {name: types.SimpleNamespace(is_available=lambda name=name: name == accelerator)
               for name in ("cuda", "npu", "xpu", "mps")}
    return types.SimpleNamespace(accelerator=api, **modules)


def _helper_binds(source: str, accelerator, min_torch: str) -> tuple:
    helper = device_type_helper("torch", min_torch, "\n", accelerators_used(source))
    namespace = {"torch": _fake_torch(accelerator)}
    exec(compile(helper, "helper", "exec"), namespace)
    return namespace["_accel_type"], namespace["_device_type"]


CUDA_ONLY = 'device = "cuda" if torch.cuda.is_available() else "cpu"\n'
NAMES_MPS = ('device = ("cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available()'
             ' else "cpu")\n')


@pytest.mark.parametrize("min_torch", ["2.6", "2.1"])
@pytest.mark.parametrize("host, expected", [
    ("cuda", ("cuda", "cuda")), ("npu", ("npu", "npu")), (None, (None, "cpu")),
    ("mps", (None, "cpu")), ("xpu", (None, "cpu")),
])
def test_a_cuda_only_module_keeps_to_cuda_the_npu_or_the_cpu(host, expected, min_torch):
    assert _helper_binds(CUDA_ONLY, host, min_torch) == expected


@pytest.mark.parametrize("min_torch", ["2.6", "2.1"])
def test_a_module_that_names_mps_itself_keeps_using_it(min_torch):
    assert _helper_binds(NAMES_MPS, "mps", min_torch) == ("mps", "mps")
    assert _helper_binds(NAMES_MPS, "xpu", min_torch) == (None, "cpu")


def test_the_port_carries_the_accepted_list():
    src = "import torch\n\n\ndef place(x):\n    return x.to(\"cuda\")\n"
    port = rewrite_python(KB, "m.py", src, Options(style="agnostic")).text
    assert '_accel_type = _accel_type if _accel_type in ("cuda", "npu") else None' in port
    port = rewrite_python(KB, "m.py", src + "MAC = 'mps'\n", Options(style="agnostic")).text
    assert '_accel_type in ("cuda", "npu", "mps")' in port
    assert rewrite_python(KB, "m.py", port, Options(style="agnostic")).text == port
