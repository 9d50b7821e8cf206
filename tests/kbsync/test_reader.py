"""The static reader on small fake torch_npu distributions (no network, no torch_npu)."""
from __future__ import annotations

import json
import zipfile

import pytest

from ascend_migrate.knowledge.coverage import load_coverage_file, validate
from ascend_migrate.knowledge.sync import (
    DirTree,
    SyncError,
    WheelTree,
    build_coverage,
    open_tree,
    render,
    sync,
)
from kbsync_wheelkit import modern_files, old_files, write_tree, write_wheel


@pytest.fixture
def modern_doc(tmp_path):
    return build_coverage(WheelTree(write_wheel(tmp_path, modern_files())))


def test_version_and_source(tmp_path):
    wheel = write_wheel(tmp_path, modern_files("9.9.0"))
    doc = build_coverage(WheelTree(wheel))
    assert doc["torch_npu_version"] == "9.9.0"
    assert doc["git_version"] == "abc123"
    assert doc["requires_torch"] == "torch ==9.9.0"
    assert doc["source"]["kind"] == "wheel"
    assert doc["source"]["filename"] == wheel.name
    import hashlib

    assert doc["source"]["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert doc["missing"] == {}


def test_wrapped_lists_found_by_target(modern_doc):
    t = modern_doc["transfer_to_npu"]
    assert t["torch_functions"] == ["ones", "randn", "zeros"]  # concatenated list, sorted
    assert t["tensor_methods"] == ["new_empty", "to"]
    assert t["module_methods"] == ["to"]
    assert t["cuda_functions"] == ["set_device", "synchronize"]
    assert t["wrapped"]["torch.fft"] == ["fftfreq"]
    assert t["device_kwargs"] == ["device", "map_location"]
    assert t["lists"]["torch_fn_white_list"] == ["zeros", "ones", "randn"]  # verbatim order


def test_npu_all_built_by_concatenation_and_mutation(modern_doc):
    assert modern_doc["npu_all"] == [
        "synchronize", "device_count", "is_available", "Stream", "Event", "NPUGraph", "graph", "mem_get_info",
    ]


def test_overlays_names_versus_whole_module(modern_doc):
    overlays = {o["target"]: o for o in modern_doc["transfer_to_npu"]["overlays"]}
    assert overlays["torch.cuda"]["mode"] == "names"
    assert "NPUGraph" in overlays["torch.cuda"]["names"]
    assert overlays["torch.cuda.amp"]["names"] == ["GradScaler", "autocast"]
    assert overlays["torch.cuda.random"]["names"] == ["get_rng_state", "manual_seed"]
    common = overlays["torch.cuda.amp.common"]
    assert common["mode"] == "module" and common["names"] is None
    assert "no __all__" in common["note"]
    # objects (not modules) in a patch table are plain assignments
    assert "torch.profiler.profile" not in overlays
    patches = modern_doc["transfer_to_npu"]["patches"]
    assert patches["torch.profiler.profile"]["value"] == "torch_npu.profiler.profile"
    assert patches["torch.profiler.ProfilerActivity.CUDA"]["kind"] == "alias"


def test_patches_kinds_conditions_and_deferral(modern_doc):
    patches = modern_doc["transfer_to_npu"]["patches"]
    assert patches["torch.cuda.DoubleTensor"] == {
        "condition": None, "deferred": False, "kind": "alias", "value": "torch.npu.FloatTensor", "wrappers": [],
    }
    assert patches["torch.distributed.init_process_group"]["wrappers"] == ["_wrapper_cuda", "_wrapper_hccl"]
    mesh = patches["torch.distributed.device_mesh.init_device_mesh"]
    assert mesh["condition"] == "hasattr(torch.distributed, 'init_device_mesh')"
    assert patches["torch.cuda.default_generators"]["deferred"] is True
    assert patches["torch.cuda.CUDAGraph"]["value"] == "torch.npu.NPUGraph"  # via setattr
    assert patches["torch.utils.cpp_extension"]["kind"] == "alias"  # imported name resolved
    # `from torch.distributed.checkpoint import filesystem` inside _init is resolved
    assert "torch.distributed.checkpoint.filesystem._OverlappingCpuLoader.__init__" in patches
    assert patches["torch.jit.script"]["kind"] == "replace"
    assert modern_doc["transfer_to_npu"]["jit_script_disabled"] is True


def test_call_time_and_unreachable_assignments_are_not_patches(modern_doc):
    patches = modern_doc["transfer_to_npu"]["patches"]
    assert "torch.cuda.is_available" not in patches  # only inside the wrapper, at call time
    assert "torch.cuda.never" not in patches  # function never called


def test_distributed_patches(modern_doc):
    assert modern_doc["transfer_to_npu"]["distributed_patches"] == [
        "torch.distributed.checkpoint.filesystem._OverlappingCpuLoader.__init__",
        "torch.distributed.device_mesh.init_device_mesh",
        "torch.distributed.distributed_c10d._new_group_with_tag",
        "torch.distributed.init_process_group",
        "torch.nn.parallel.DistributedDataParallel.__init__",
    ]


def test_third_party_and_env_activation(modern_doc):
    third = modern_doc["third_party"]
    assert third["path"] == "torch_npu/contrib/apis_config.json"
    assert third["packages"]["peft"] == {"min_version": "0.5.0", "apis": {"peft.utils.other.infer_device": "function"}}
    assert modern_doc["transfer_to_npu"]["env_activation"] == ["torch_npu/_init/core/optional_features.py"]


def test_old_layout(tmp_path):
    doc = build_coverage(WheelTree(write_wheel(tmp_path, old_files())))
    t = doc["transfer_to_npu"]
    assert doc["torch_npu_version"] == "1.0.0.post3"
    assert t["path"] == "torch_npu/utils/transfer_to_npu.py"
    assert t["torch_functions"] == ["empty", "zeros"]  # found by loop target, not list name
    assert t["tensor_methods"] == ["to"]
    assert t["module_methods"] is None
    assert "torch.nn.Module" in doc["missing"]["transfer_to_npu.module_methods"]
    assert [o["target"] for o in t["overlays"]] == ["torch.cuda"]
    assert t["jit_script_disabled"] is False
    assert t["env_activation"] == []
    assert doc["third_party"] is None
    assert "does not load apis_config.json" in doc["missing"]["third_party"]
    assert t["device_kwargs"] is None and "transfer_to_npu.device_kwargs" in doc["missing"]
    validate(doc, tmp_path / "x.json")  # nulls all carry reasons


def test_site_packages_matches_wheel(tmp_path):
    files = modern_files()
    wheel_doc = build_coverage(WheelTree(write_wheel(tmp_path, files)))
    site = write_tree(tmp_path / "site", files)
    for root in (site, site / "torch_npu"):
        dir_doc = build_coverage(DirTree(root))
        assert dir_doc["source"] == {"kind": "site-packages", "filename": None, "sha256": None}
        assert dir_doc["sources_sha256"] == wheel_doc["sources_sha256"]
        assert {k: v for k, v in dir_doc.items() if k != "source"} == {
            k: v for k, v in wheel_doc.items() if k != "source"
        }


def test_render_is_canonical_and_deterministic(tmp_path):
    wheel = write_wheel(tmp_path, modern_files())
    first = render(build_coverage(WheelTree(wheel)))
    second = render(build_coverage(WheelTree(wheel)))
    assert first == second and first.endswith("}\n")
    assert first == json.dumps(json.loads(first), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def test_sync_writes_loadable_file(tmp_path):
    path, doc = sync(wheel=write_wheel(tmp_path, modern_files("9.9.0")), out_dir=tmp_path / "kb")
    assert path.name == "torch_npu-9.9.0.json"
    cov = load_coverage_file(path)
    assert cov.version == "9.9.0" and cov.torch_fn_wrapped("torch.zeros")


# ---- malformed inputs: recorded as missing with a reason, never guessed


def test_unparseable_transfer_module(tmp_path):
    files = modern_files()
    files["torch_npu/contrib/transfer_to_npu.py"] = "def broken(:\n"
    doc = build_coverage(WheelTree(write_wheel(tmp_path, files)))
    t = doc["transfer_to_npu"]
    assert t["torch_functions"] is None and t["jit_script_disabled"] is None
    assert "does not parse" in doc["missing"]["transfer_to_npu.torch_functions"]
    assert doc["npu_all"] is not None  # other sections still read
    validate(doc, tmp_path / "x.json")


def test_unresolvable_list_is_a_problem_not_a_guess(tmp_path):
    files = modern_files()
    files["torch_npu/contrib/transfer_to_npu.py"] = files["torch_npu/contrib/transfer_to_npu.py"].replace(
        "torch_fn_white_list = ['zeros', 'ones'] + ['randn']",
        "torch_fn_white_list = ['zeros', EXTRA]",
    )
    doc = build_coverage(WheelTree(write_wheel(tmp_path, files)))
    t = doc["transfer_to_npu"]
    assert t["torch_functions"] is None
    assert any("EXTRA" in p for p in t["problems"])
    assert "wraps no list" in doc["missing"]["transfer_to_npu.torch_functions"]


def test_dynamic_all(tmp_path):
    files = modern_files()
    files["torch_npu/npu/__init__.py"] = "__all__ = sorted(globals())\n"
    doc = build_coverage(WheelTree(write_wheel(tmp_path, files)))
    assert doc["npu_all"] is None
    assert "cannot be evaluated statically" in doc["missing"]["npu_all"]
    overlay = [o for o in doc["transfer_to_npu"]["overlays"] if o["target"] == "torch.cuda"][0]
    assert overlay["mode"] == "module" and "__all__" in overlay["note"]


def test_all_from_another_module(tmp_path):
    files = modern_files()
    files["torch_npu/npu/__init__.py"] = "from . import random as _r\n__all__ = ['a'] + _r.__all__\n"
    doc = build_coverage(WheelTree(write_wheel(tmp_path, files)))
    assert doc["npu_all"] == ["a", "manual_seed", "get_rng_state"]


@pytest.mark.parametrize(
    "content, reason",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "top level is not an object"),
        ('{"peft": {"apis": {}}}', "'version' is missing"),
        ('{"peft": {"version": "1", "apis": {"x": "lambda"}}}', "'apis' must map"),
    ],
)
def test_bad_apis_config(tmp_path, content, reason):
    files = modern_files()
    files["torch_npu/contrib/apis_config.json"] = content
    doc = build_coverage(WheelTree(write_wheel(tmp_path, files)))
    assert doc["third_party"] is None
    assert reason in doc["missing"]["third_party"]


def test_missing_apis_config(tmp_path):
    files = modern_files()
    del files["torch_npu/contrib/apis_config.json"]
    doc = build_coverage(WheelTree(write_wheel(tmp_path, files)))
    assert doc["missing"]["third_party"] == "torch_npu/contrib/apis_config.json is not in the distribution"


def test_no_transfer_module(tmp_path):
    files = modern_files()
    del files["torch_npu/contrib/transfer_to_npu.py"]
    doc = build_coverage(WheelTree(write_wheel(tmp_path, files)))
    assert doc["transfer_to_npu"]["path"] is None
    assert doc["missing"]["transfer_to_npu.cuda_functions"] == "no transfer_to_npu module in the distribution"
    validate(doc, tmp_path / "x.json")


def test_version_mismatch_is_recorded(tmp_path):
    files = modern_files("9.9.0")
    files["torch_npu/version.py"] = "__version__ = '9.9.1'\n"
    doc = build_coverage(WheelTree(write_wheel(tmp_path, files)))
    assert doc["torch_npu_version"] == "9.9.1"
    assert "METADATA says 9.9.0" in doc["missing"]["version_check"]


def test_not_a_wheel(tmp_path):
    bogus = tmp_path / "torch_npu-1.0-py3-none-any.whl"
    bogus.write_bytes(b"not a zip")
    with pytest.raises(SyncError, match="not a wheel"):
        WheelTree(bogus)


def test_no_version_anywhere(tmp_path):
    path = tmp_path / "w.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("torch_npu/__init__.py", "")
    with pytest.raises(SyncError, match="no torch_npu version"):
        build_coverage(WheelTree(path))


def test_open_tree_arguments(tmp_path):
    with pytest.raises(SyncError):
        open_tree()
    with pytest.raises(SyncError, match="no torch_npu package"):
        DirTree(tmp_path)
