"""The shipped coverage files and the loader's queries."""
from __future__ import annotations

import json
import re
import shutil

import pytest

from ascend_migrate.knowledge.coverage import (
    COVERAGE_DIR,
    KnowledgeError,
    available_versions,
    diff_coverage,
    load_coverage,
    load_coverage_file,
    newest_version,
    parse_version,
    resolve_version,
)
from ascend_migrate.knowledge.sync import render

SHIPPED = available_versions()


def test_shipped_versions():
    assert "2.13.0" in SHIPPED
    lines = {tuple(parse_version(v)[0][:2]) for v in SHIPPED}
    assert {(2, 1), (2, 6), (2, 13)} <= lines
    assert newest_version() == SHIPPED[-1]
    assert SHIPPED == sorted(SHIPPED, key=parse_version)


@pytest.mark.parametrize("version", SHIPPED)
def test_shipped_file_is_valid_canonical_and_from_a_wheel(version):
    cov = load_coverage(version)
    assert cov.version == version
    text = cov.path.read_text(encoding="utf-8")
    assert text == render(json.loads(text))
    src = cov.source
    assert src["kind"] == "wheel"
    assert src["filename"].startswith(f"torch_npu-{version}-") and src["filename"].endswith(".whl")
    assert re.fullmatch(r"[0-9a-f]{64}", src["sha256"])
    assert cov.missing == {}
    # every shipped release wraps these and overlays torch.cuda
    assert cov.torch_fn_wrapped("zeros") and cov.tensor_fn_wrapped("to") and cov.module_fn_wrapped("to_empty")
    assert cov.cuda_overlaid("synchronize") and cov.cuda_overlaid("torch.cuda.amp.GradScaler")
    assert cov.distributed_patched("torch.distributed.init_process_group")


def test_2_13_matches_the_recorded_facts():
    cov = load_coverage("2.13.0")
    assert len(cov.torch_functions) == 47 and len(cov.cuda_functions) == 24
    assert cov.tensor_methods == {"new_empty", "new_empty_strided", "new_full", "new_ones", "new_tensor",
                                  "new_zeros", "to", "pin_memory"}
    assert len(cov.npu_all) == 144
    assert cov.device_kwargs == ("device", "device_type", "map_location", "device_id")
    # overlay semantics
    assert cov.cuda_overlaid("NPUGraph")  # NPU-only name copied onto torch.cuda
    assert not cov.cuda_overlaid("nvtx") and not cov.cuda_overlaid("get_arch_list")
    assert not cov.cuda_overlaid("memory")  # namespace member, not in __all__
    assert not cov.cuda_overlaid("list_gpu_processes")  # wrapped, but still the CUDA implementation
    assert cov.cuda_fn_wrapped("list_gpu_processes")
    assert cov.cuda_overlaid("CUDAGraph") and not cov.cuda_overlaid("graphs.CUDAGraph")
    assert cov.cuda_overlaid("DoubleTensor")
    assert cov.cuda_overlaid("amp.common.amp_definitely_not_available")  # module replaced
    assert cov.cuda_overlaid("random.manual_seed")
    assert cov.cuda_overlaid("device") and cov.patch("torch.cuda.device.__init__").kind == "wrap"
    # distributed
    for name in ("new_group", "init_device_mesh", "is_nccl_available", "ProcessGroupNCCL",
                 "torch.nn.parallel.DistributedDataParallel"):
        assert cov.distributed_patched(name), name
    assert not cov.distributed_patched("torch.nn.DataParallel")
    assert cov.patch("torch.distributed.init_process_group").wrappers == ("_wrapper_cuda", "_wrapper_hccl")
    assert cov.jit_script_disabled is True and cov.env_activation is True
    # third party
    assert cov.third_party_packages == ("accelerate", "peft", "transformers", "trl")
    assert cov.third_party("transformers")["min_version"] == "4.32.0"
    assert cov.third_party("deepspeed") is None
    assert cov.is_patched("torch.fft.fftfreq") and cov.is_wrapped("torch.fft.rfftfreq")


def test_advice_differs_between_2_1_and_2_13():
    old, new = load_coverage("2.1.0.post10"), load_coverage("2.13.0")
    assert not old.cuda_overlaid("CUDAGraph") and new.cuda_overlaid("CUDAGraph")
    assert not old.cuda_overlaid("make_graphed_callables") and new.cuda_overlaid("make_graphed_callables")
    assert old.torch_fn_wrapped("autocast") and not new.torch_fn_wrapped("autocast")
    assert not old.tensor_fn_wrapped("pin_memory") and new.tensor_fn_wrapped("pin_memory")
    assert not old.distributed_patched("new_group") and new.distributed_patched("new_group")
    assert not old.distributed_patched("init_device_mesh") and new.distributed_patched("init_device_mesh")
    assert not old.env_activation and new.env_activation
    diff = diff_coverage(old, new)
    assert "CUDAGraph" not in str(diff.get("npu_all", ""))
    assert "torch.cuda.CUDAGraph" in diff["patches"]["only_b"]
    assert diff_coverage(new, new) == {"a": "2.13.0", "b": "2.13.0"}


@pytest.mark.parametrize(
    "requested, expected",
    [
        (None, None),  # newest
        ("2.13.0", "2.13.0"),
        ("2.1.0.post10", "2.1.0.post10"),
        ("2.1.0", "2.1.0.post17"),
        ("2.1", "2.1.0.post17"),
        ("2.6.0", "2.6.0"),
        ("2.6.0.post3", "2.6.0.post5"),
        ("2.6.1", "2.6.0.post5"),
        ("v2.13.0", "2.13.0"),
    ],
)
def test_resolve_version(requested, expected):
    assert resolve_version(requested) == (expected or SHIPPED[-1])


@pytest.mark.parametrize("requested", ["1.11.0", "3.0", "banana"])
def test_resolve_unknown_version(requested):
    with pytest.raises(KnowledgeError, match=re.escape(requested)):
        resolve_version(requested)


def test_empty_directory(tmp_path):
    assert available_versions(tmp_path) == []
    with pytest.raises(KnowledgeError, match="no coverage files"):
        load_coverage(None, tmp_path)


# ---- malformed coverage files fail as 'file: key: reason'


def _copy_2_13(tmp_path):
    target = tmp_path / "torch_npu-2.13.0.json"
    shutil.copy(COVERAGE_DIR / "torch_npu-2.13.0.json", target)
    return target


def _mutate(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize(
    "change, key, reason",
    [
        (lambda d: d.pop("npu_all"), "npu_all", "missing required key"),
        (lambda d: d.update(schema_version=99), "schema_version", "expected 1"),
        (lambda d: d.update(torch_npu_version="2.12.0"), "torch_npu_version", "does not match the file name"),
        (lambda d: d["source"].update(sha256="xyz"), "source.sha256", "64 lowercase hex"),
        (lambda d: d["transfer_to_npu"].update(torch_functions="zeros"), "transfer_to_npu.torch_functions",
         "list of strings or null"),
        (lambda d: d["transfer_to_npu"].update(cuda_functions=None), "transfer_to_npu.cuda_functions",
         "null without a reason"),
        (lambda d: d["transfer_to_npu"]["overlays"][0].update(mode="sideways"), "transfer_to_npu.overlays[0].mode",
         "expected names"),
        (lambda d: d["transfer_to_npu"]["patches"]["torch.jit.script"].update(kind="magic"),
         "transfer_to_npu.patches.torch.jit.script.kind", "expected wrap"),
        (lambda d: d["third_party"]["packages"]["peft"].update(apis={"x": "maybe"}),
         "third_party.packages.peft.apis", "method"),
    ],
)
def test_malformed_file(tmp_path, change, key, reason):
    path = _copy_2_13(tmp_path)
    _mutate(path, change)
    with pytest.raises(KnowledgeError) as info:
        load_coverage("2.13.0", tmp_path)
    assert info.value.key == key
    assert reason in info.value.reason
    assert str(info.value).startswith(f"{path}: {key}: ")


def test_invalid_json(tmp_path):
    path = tmp_path / "torch_npu-2.13.0.json"
    path.write_text('{"schema_version": 1,\n oops}')
    with pytest.raises(KnowledgeError, match=r"torch_npu-2\.13\.0\.json: line 2: invalid JSON"):
        load_coverage_file(path)


def test_unmodified_copy_loads(tmp_path):
    path = _copy_2_13(tmp_path)
    assert load_coverage("2.13", tmp_path).path == path


def test_is_patched_follows_routes_across_mechanisms():
    # torch.autocast("cuda") is covered in both releases, by a list in one and a patched __init__ in the other
    old, new = load_coverage("2.1.0.post10"), load_coverage("2.13.0")
    assert old.torch_fn_wrapped("autocast") and old.is_patched("torch.autocast")
    assert not new.torch_fn_wrapped("autocast") and new.is_patched("torch.autocast")
    assert old.is_patched("torch.Generator") and new.is_patched("torch.Generator")
    assert not new.is_patched("torch.nn.DataParallel")
