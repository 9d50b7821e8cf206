"""The stand-in answers as torch_npu does where that is known, and its transfer_to_npu applies
what our coverage data says the chosen release patches."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from ascend_migrate.knowledge.coverage import load_coverage

pytestmark = pytest.mark.needs_torch

HERE = Path(__file__).resolve().parent


def _probe(npu_standin, *args: str, **env_options) -> dict:
    proc = npu_standin.run([str(HERE / "probe_device.py"), *args], cwd=HERE, **env_options)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(l for l in proc.stdout.splitlines() if l.startswith("PROBE "))
    return json.loads(line[len("PROBE "):])


@pytest.fixture(scope="module")
def probed(npu_standin) -> dict:
    return _probe(npu_standin, "--transfer", device_count=2)


def test_the_test_process_never_sees_a_torch_npu():
    assert importlib.util.find_spec("torch_npu") is None


def test_device_functions(probed):
    assert probed["emulated"] is True and probed["emulated_env"] == "1"
    assert probed["launched_as_emulated"] == "1"
    assert probed["device_count"] == 2 and probed["is_available"] is True
    assert probed["current_after_set"] == 1 and probed["new_tensor_device"] == "npu:1"
    assert probed["allocated_grew_by"] == 4 * 1024 * 1024
    assert probed["peak_at_least"] is True
    assert probed["accelerator"] == "npu"


def test_capability_queries_answer_as_torch_npu(probed):
    assert probed["capability"] is None and probed["capability_warned"] is True
    assert probed["props_major"] is None
    assert probed["set_device_cuda"]["error"] == "ValueError"
    assert "Expected a npu device" in probed["set_device_cuda"]["message"]


def test_mixed_devices_raise(probed):
    assert probed["mixed_devices"]["error"] == "RuntimeError"
    assert "same device" in probed["mixed_devices"]["message"]
    assert probed["two_npus"]["error"] == "RuntimeError"
    assert probed["cpu_scalar_ok"] == {"ok": "6.0"}


def test_nccl_needs_the_transfer_patch(probed):
    assert probed["hccl_registered"] is True
    assert probed["nccl_without_patch"]["error"] == "RuntimeError"
    assert "NCCL" in probed["nccl_without_patch"]["message"]
    assert probed["backend_after_patch"] == "hccl"
    assert probed["all_reduce"] == [1.0, 1.0, 1.0, 1.0]


def test_transfer_rewrites_cuda_to_npu(probed):
    assert probed["cuda_tensor"] == "npu:0"
    assert probed["tensor_cuda_method"] == "npu:0" and probed["is_cuda"] is True
    assert probed["cuda_is_available"] is True
    assert probed["cuda_capability"] is None  # the overlay hands back torch_npu's answer
    assert probed["to_int"] == "npu:0"


def test_transfer_applies_what_the_coverage_lists(probed):
    import torch

    cov = load_coverage(probed["coverage_version"])
    applied = set(probed["applied"])
    skipped = probed["skipped"]
    # every torch function the release wraps and this torch has is wrapped
    expected = {f"torch.{n}" for n in cov.torch_functions if hasattr(torch, n)}
    assert expected and expected <= applied
    assert {f"torch.Tensor.{n}" for n in cov.tensor_methods} <= applied
    # every explicit patch is either applied or skipped with a reason, nothing silently dropped
    for target in cov.patches:
        assert target in applied or skipped.get(target), target
    assert "torch.distributed.init_process_group" in applied
    assert "torch.Tensor.cuda" in applied and "torch.nn.Module.cuda" in applied
    cuda_overlay = next(o for o in cov.overlays if o.target == "torch.cuda")
    assert {f"torch.cuda.{n}" for n in ("is_available", "device_count", "set_device", "synchronize")} <= applied
    assert all(f"torch.cuda.{n}" in applied or f"torch.cuda.{n}" in skipped for n in cuda_overlay.names)


def _named_by(cov, qualname: str) -> bool:
    owner, _, name = qualname.rpartition(".")
    if qualname in cov.patches or name in cov.wrapped.get(owner, ()):
        return True
    return any(o.target == owner and (o.names is None or name in o.names) for o in cov.overlays)


def test_an_older_release_drives_a_different_patch_set(npu_standin, probed):
    older = _probe(npu_standin, "--transfer", release="2.1.0", device_count=2)
    cov_old = load_coverage(older["coverage_version"])
    assert older["coverage_version"].startswith("2.1.0")
    # everything patched under 2.1.0 is named by 2.1.0's coverage, and what only 2.13 names is not patched
    assert all(_named_by(cov_old, q) for q in older["applied"])
    only_new = [q for q in probed["applied"] if not _named_by(cov_old, q)]
    assert only_new and not set(only_new) & set(older["applied"])


def test_another_torch_is_refused_with_the_reason(monkeypatch, tmp_path):
    import torch

    from ascend_migrate.emulated_npu import BUILD_DIR_ENV, EmulatedNpuError, ensure_built

    monkeypatch.setattr(torch, "__version__", "2.12.0+cpu")
    monkeypatch.setenv(BUILD_DIR_ENV, str(tmp_path / "build"))
    with pytest.raises(EmulatedNpuError, match=r"torch 2\.12\.0\+cpu is installed, but the emulated npu is written "
                                               r"against torch 2\.13\.0's internals"):
        ensure_built()
    assert not (tmp_path / "build").exists()  # nothing was built


def test_module_to_npu_keeps_tied_weights(npu_standin, tmp_path):
    """A weight shared by two modules (a tied embedding and output layer) stays one Parameter
    after `.to("npu")`, as on torch_npu; untied, training updates the two copies apart."""
    script = tmp_path / "tied.py"
    script.write_text(
        "import torch, torch_npu\n"
        "emb = torch.nn.Embedding(8, 4)\n"
        "head = torch.nn.Linear(4, 8, bias=False)\n"
        "head.weight = emb.weight\n"
        "model = torch.nn.ModuleDict({'emb': emb, 'head': head}).to('npu')\n"
        "assert model['emb'].weight is model['head'].weight, 'untied'\n"
        "assert model['emb'].weight.device.type == 'npu'\n"
        "print('tied')\n")
    ran = npu_standin.run([str(script)], cwd=tmp_path)
    assert ran.returncode == 0 and "tied" in ran.stdout, ran.stderr[-2000:]


def test_a_cpu_scalar_first_keeps_the_result_on_the_npu(npu_standin, tmp_path):
    """`1.0 - t` is rsub, which calls sub(wrapped 1.0, t): the CPU fallback used to place the
    result on the first operand's device (CPU), and HF GPT-2's attention mask then met an npu
    tensor on another device."""
    code = ("import torch, torch_npu\n"
            "t = torch.ones(2, device='npu')\n"
            "print(*[str(x.device) for x in (1.0 - t, torch.rsub(t, 1.0), 2 * t, 1 / t, (1.0 - t) * t)])\n")
    proc = npu_standin.run(["-c", code], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["npu:0"] * 5
