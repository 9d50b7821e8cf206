"""The op-plugin registry reader, on small registries of our own in each layout the real one had."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.knowledge import npu_ops
from ascend_migrate.knowledge.npu_ops import (
    RegistryError,
    build_ops,
    open_tree,
    parse_functions,
    torch_key,
)

# One file for all torch versions: `all_version` first, ranges, `newest`, plain lists,
# a schema listed twice, and every section.
ALL_VERSION = """\
all_version: [v2.1, v2.2, v2.3, v2.4, v2.5]
official:
  - func: relu(Tensor self) -> Tensor
    acl_op: all_version
    op_api: all_version

  - func: gelu(Tensor self, *, str approximate='none') -> Tensor
    op_api: [v2.2, newest]

  - func: tanh(Tensor self) -> Tensor
    acl_op: [v2.1, v2.3]

  - func: cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor
    op_api: v2.1, v2.4

  - func: sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)
    acl_op: v2.5

  - func: sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)
    op_api: [ v2.1, v2.2 ]

  - func: erf(Tensor self) -> Tensor
    gen_opapi:
      exec: aclnnErf

autograd:
  - func: _thnn_fused_gru_cell(Tensor input_gates, Tensor hidden_gates, Tensor hx) -> (Tensor, Tensor)
    op_api: [v2.4, newest]

custom:
  - func: npu_fancy(Tensor self) -> Tensor
    op_api: all_version

symint:
  - func: npu_fancy(Tensor self) -> Tensor
    op_api: all_version

  - func: embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1) -> Tensor
    acl_op: [v2.1, newest]

quant:
  - func: q_scale(Tensor self) -> float
    acl_op: v2.2
"""

# The file of a per-version folder (v2r1/): every path it names applies to that version.
FOLDER = """\
official:
 - func: relu(Tensor self) -> Tensor
   impl_ns: acl_op, op_api
 - func: tanh(Tensor self) -> Tensor
   impl_ns: acl_op
 - func: isin.Tensor_Scalar(Tensor elements, Scalar test_element) -> Tensor
   impl_ns: op_api
symint:
 - func: embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1) -> Tensor
   impl_ns: acl_op
custom:
 - func: npu_fancy(Tensor self) -> Tensor
   impl_ns: op_api
"""

# One file pairing `impl_ns` with `version` lists (with the registry's '1,11' spelling of 1.11).
PAIRED = """\
official:
  - func: relu(Tensor self) -> Tensor
    impl_ns: acl_op, op_api, acl_op, acl_op, op_api
    version: 1,11, 1,11, 2.0, 2.1, 2.1
  - func: tanh(Tensor self) -> Tensor
    impl_ns: acl_op
    version: 2.0
"""

NATIVE = """\
backend: NPU
supported:
  - copy_
  - func: clone
    op_api: True
  - view
custom:
  - func: npu_format_cast(Tensor self, int acl_format) -> Tensor
symint:
  - as_strided_
"""


def paths(entries: dict, name: str):
    return sorted(entries[name]["paths"]) if name in entries else None


def test_versions_spelled_every_way():
    assert torch_key("v2.1") == torch_key("2.1") == (2, 1)
    assert torch_key("1,11") == (1, 11)
    assert torch_key("v2.12") > torch_key("v2.9")
    assert torch_key("newest") > torch_key("v9.99")
    with pytest.raises(ValueError):
        torch_key("two")


@pytest.mark.parametrize("tv, expected", [
    ((2, 1), {"relu": ["acl_op", "op_api"], "gelu": None, "tanh": ["acl_op"], "cumsum": ["op_api"],
              "sort.stable": ["op_api"], "_thnn_fused_gru_cell": None, "embedding": ["acl_op"], "q_scale": None}),
    ((2, 2), {"gelu": ["op_api"], "tanh": ["acl_op"], "cumsum": None, "sort.stable": ["op_api"], "q_scale": ["acl_op"]}),
    ((2, 4), {"gelu": ["op_api"], "tanh": None, "cumsum": ["op_api"], "sort.stable": None,
              "_thnn_fused_gru_cell": ["op_api"]}),
    ((2, 5), {"gelu": ["op_api"], "sort.stable": ["acl_op"], "embedding": ["acl_op"], "q_scale": None}),
])
def test_all_version_file(tv, expected):
    entries = parse_functions(ALL_VERSION, tv)
    for name, want in expected.items():
        assert paths(entries, name) == want, name
    assert "erf" not in entries  # listed with no kernel path: no NPU kernel
    assert entries["npu_fancy"]["sections"] == {"custom", "symint"}


def test_newest_reaches_a_version_the_header_does_not_list():
    entries = parse_functions(ALL_VERSION, (2, 9))
    assert paths(entries, "gelu") == ["op_api"]
    assert paths(entries, "relu") is None  # all_version means the versions listed, not later ones


def test_per_version_folder_file():
    entries = parse_functions(FOLDER, (2, 1), folder=True)
    assert paths(entries, "relu") == ["acl_op", "op_api"]
    assert paths(entries, "isin.Tensor_Scalar") == ["op_api"]
    assert paths(entries, "embedding") == ["acl_op"]


def test_impl_ns_paired_with_versions():
    assert paths(parse_functions(PAIRED, (2, 1)), "relu") == ["acl_op", "op_api"]
    assert paths(parse_functions(PAIRED, (2, 0)), "relu") == ["acl_op"]
    assert paths(parse_functions(PAIRED, (1, 11)), "relu") == ["acl_op", "op_api"]
    assert paths(parse_functions(PAIRED, (2, 1)), "tanh") is None


def test_mismatched_pairs_and_non_yaml_are_refused():
    with pytest.raises(RegistryError):
        parse_functions("official:\n  - func: relu(Tensor self) -> Tensor\n    impl_ns: acl_op, op_api\n"
                        "    version: 2.1\n", (2, 1))
    with pytest.raises(RegistryError):
        parse_functions("official: [\n", (2, 1))
    with pytest.raises(RegistryError):
        parse_functions("- just a list\n", (2, 1))


def _checkout(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_build_prefers_the_folder_of_the_torch_version(tmp_path):
    root = _checkout(tmp_path / "op-plugin", {
        "op_plugin/config/v2r1/op_plugin_functions.yaml": FOLDER,
        "op_plugin/config/op_plugin_functions.yaml": PAIRED,
    })
    native = _checkout(tmp_path / "pytorch", {npu_ops.NATIVE_FUNCTIONS: NATIVE})
    doc = build_ops("2.1.0.post3", open_tree(root), open_tree(native))
    assert doc["source"]["layout"] == "per-version folder"
    assert doc["torch_version"] == "2.1"
    assert doc["aten"] == {"embedding": ["acl_op"], "isin.Tensor_Scalar": ["op_api"], "relu": ["acl_op", "op_api"],
                           "tanh": ["acl_op"]}
    assert doc["custom_count"] == 1
    assert doc["torch_npu_own"] == ["as_strided_", "clone", "copy_", "view"]
    # torch 2.0 has no folder: the single file is read
    doc = build_ops("2.0.1", open_tree(root))
    assert doc["source"]["layout"] == "impl_ns with versions"
    assert doc["aten"] == {"relu": ["acl_op"], "tanh": ["acl_op"]}


def test_build_refuses_a_torch_version_the_file_does_not_cover(tmp_path):
    root = _checkout(tmp_path, {"op_plugin/config/op_plugin_functions.yaml": ALL_VERSION})
    with pytest.raises(RegistryError, match="not among its versions"):
        build_ops("2.9.0", open_tree(root))
    with pytest.raises(RegistryError, match="no op_plugin/config"):
        build_ops("2.1.0", open_tree(tmp_path / "op_plugin"))


def test_data_answers_by_warning_name(tmp_path, monkeypatch):
    root = _checkout(tmp_path / "op", {"op_plugin/config/op_plugin_functions.yaml": ALL_VERSION})
    doc = build_ops("2.4.0", open_tree(root), open_tree(_checkout(tmp_path / "pt", {npu_ops.NATIVE_FUNCTIONS: NATIVE})))
    ops = npu_ops.NpuOps("2.4.0", tmp_path / "x.json", json.loads(npu_ops.render(doc)))
    assert ops.paths("aten::gelu") == ["op_api"]
    assert ops.supported("aten::relu.default")  # the overload torch calls `default` is the bare name
    assert ops.supported("aten::copy_") and ops.paths("aten::copy_") == ["torch_npu"]
    assert not ops.supported("aten::tanh")
    assert not ops.supported("torchvision::nms")
    assert npu_ops.fallback_ops(ops, ["aten::tanh", "aten::gelu", "torchvision::nms"]) == ["aten::tanh", "torchvision::nms"]


def test_cli_ops_sync_writes_the_user_folder_and_refuses_to_overwrite(tmp_path, monkeypatch):
    from ascend_migrate.knowledge.sync_cli import kb_group

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    root = _checkout(tmp_path / "op", {"op_plugin/config/op_plugin_functions.yaml": ALL_VERSION})
    runner = CliRunner()
    result = runner.invoke(kb_group, ["ops-sync", "--torch-npu", "2.3.0", "--op-plugin", str(root)])
    assert result.exit_code == 0, result.output
    path = tmp_path / "data" / "ascend-migrate" / "npu_ops" / "torch_npu-2.3.0.json"
    doc = json.loads(path.read_text())
    assert doc["aten"]["tanh"] == ["acl_op"] and "gelu" in doc["aten"]
    assert npu_ops.load_ops("2.3.0").path == path  # read before the packaged data
    again = runner.invoke(kb_group, ["ops-sync", "--torch-npu", "2.3.0", "--op-plugin", str(root)])
    assert again.exit_code == 1 and "--force" in again.output
    bad = runner.invoke(kb_group, ["ops-sync", "--torch-npu", "2.9.0", "--op-plugin", str(root)])
    assert bad.exit_code == 1 and "not among its versions" in bad.output


def test_packaged_data_loads_and_tells_releases_apart():
    versions = npu_ops.ops_versions()
    assert {"2.1.0.post10", "2.6.0", "2.13.0"} <= set(versions)
    for version in versions:
        ops = npu_ops.load_ops(version)
        assert ops.version == version and len(ops.aten) > 500
        assert ops.source["op_plugin_commit"] and ops.supported("aten::mm") and ops.supported("aten::copy_")
    assert not npu_ops.load_ops("2.2.0").supported("aten::isin.Tensor_Tensor_out")
    assert npu_ops.load_ops("2.1.0.post10").supported("aten::isin.Tensor_Tensor_out")
    assert npu_ops.older_than_data("1.11.0") and not npu_ops.older_than_data("2.6.0")
    assert npu_ops.resolve_ops_version("2.6") == "2.6.0.post5"
    assert npu_ops.resolve_ops_version("1.8.1") is None
