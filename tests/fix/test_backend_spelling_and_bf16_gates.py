"""Two ports that used to change behaviour silently on an NPU host.

- An upper-case backend name ("NCCL"): torch accepts any case, but transfer_to_npu's wrapper of
  init_process_group/new_group replaces only the lower-case substring "nccl", so the name passes it
  and torch then asks for NCCL, which Ascend lacks.
- A compute-capability gate that picks bf16 or fp16: an NPU reports no CUDA capability, so the
  neutral (0, 0) fallback chose fp16 on chips that support bf16; the port asks the device instead.
"""
import types

from ascend_migrate.fix.rewrite import Options, rewrite_python
from ascend_migrate.knowledge.base import load_knowledge
from ascend_migrate.scan.engine import Job, analyse

KB = load_knowledge()
# The dtypes the port picks between, as markers: the port runs against a stand-in torch module.
BF16, FP16 = types.SimpleNamespace(name="bfloat16"), types.SimpleNamespace(name="float16")


def _port(style: str, src: str) -> str:
    return rewrite_python(KB, "train.py", src, Options(style=style, inject=False, annotate=False)).text


def test_transfer_lower_cases_a_backend_name_that_reaches_a_process_group_call():
    src = ('import torch.distributed as dist\n'
           'dist.init_process_group(backend="NCCL" if ok else "GLOO")\n'
           'dist.init_process_group("Nccl")\n'
           'dist.new_group(backend="NCCL")\n')
    out = _port("transfer", src)
    assert 'backend="nccl" if ok else "GLOO"' in out
    assert 'dist.init_process_group("nccl")' in out
    assert 'dist.new_group(backend="nccl")' in out
    assert _port("transfer", out) == out


def test_transfer_leaves_a_lower_case_backend_to_the_patch():
    src = 'import torch.distributed as dist\ndist.init_process_group(backend="nccl")\n'
    assert _port("transfer", src) == src


def test_an_upper_case_backend_elsewhere_says_the_patch_misses_it():
    src = 'BACKEND = "NCCL"\nLOWER = "nccl"\n'
    findings = analyse(Job("cfg.py", "python"), src.encode(), KB).findings
    by_line = {f.line: f for f in findings if f.rule == "DS001"}
    assert "lower case" in by_line[1].message
    assert "lower case" not in by_line[2].message


def test_agnostic_derives_a_conditional_backend_from_the_device():
    src = 'import torch.distributed as dist\ndist.init_process_group(backend="NCCL" if ok else "GLOO")\n'
    out = _port("agnostic", src)
    assert 'backend=torch.distributed.get_default_backend_for_device(_device_type) if ok else "GLOO"' in out


GATES = '''import torch
dtype = torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16
use_fp16 = torch.cuda.get_device_capability()[0] < 8
flash_ok = torch.cuda.get_device_capability()[0] >= 8
'''


def test_transfer_asks_the_device_for_bf16():
    out = _port("transfer", GATES)
    assert "dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16" in out
    assert "use_fp16 = not torch.cuda.is_bf16_supported()" in out
    # A gate that picks no precision keeps the neutral fallback.
    assert "flash_ok = (torch.cuda.get_device_capability() or (0, 0))[0] >= 8" in out


def _run_agnostic(accel_type, module, cuda_version=None):
    code = _port("agnostic", GATES)
    fake_torch = types.SimpleNamespace(
        bfloat16=BF16, float16=FP16,
        version=types.SimpleNamespace(cuda=cuda_version),
        accelerator=types.SimpleNamespace(is_available=lambda: accel_type is not None,
                                          current_accelerator=lambda: types.SimpleNamespace(type=accel_type)),
        get_device_module=lambda t: module,
        cuda=types.SimpleNamespace(get_device_capability=lambda: (7, 0)))
    scope = {}
    exec(compile(code.replace("import torch\n", "", 1), "port.py", "exec"), {"torch": fake_torch}, scope)
    return scope


def test_agnostic_picks_bf16_where_the_accelerator_supports_it():
    npu = types.SimpleNamespace(is_bf16_supported=lambda: True)
    scope = _run_agnostic("npu", npu)
    assert scope["dtype"] is BF16 and scope["use_fp16"] is False


def test_agnostic_keeps_the_capability_test_on_cuda_and_fp16_without_an_answer():
    gpu = types.SimpleNamespace(is_bf16_supported=lambda: True)  # emulation would say yes on a V100
    assert _run_agnostic("cuda", gpu, cuda_version="12.4")["dtype"] is FP16
    assert _run_agnostic(None, None)["dtype"] is FP16
    assert _run_agnostic("mps", types.SimpleNamespace())["dtype"] is FP16
    out = _port("agnostic", GATES)
    assert _port("agnostic", out) == out
