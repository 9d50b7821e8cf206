"""The report's `operators` section from recorded counts (validate.operators), without a device:
fallbacks named as torch_npu names them, per step, first dispatch site, the CPU-cannot-run case,
float64 on the device, and "not checked" for runs without the emulated npu."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.validate import operators
from ascend_migrate.validate.report import to_markdown

pytestmark = pytest.mark.needs_torch

TRAINER = Path(__file__).resolve().parents[1] / "fixtures" / "validate_commands" / "cuda_trainer"
TRAIN = ["python", "train.py", "--device", "cpu", "--epochs", "2", "--out", "{scratch}"]


def write_record(folder: Path, pid: int, ops: dict, sites: dict, steps: int = 2) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"ops-{pid}.json").write_text(json.dumps(
        {"pid": pid, "rank": None, "status": "stopped", "steps": steps, "error": None, "npu": True,
         "ops": ops, "sites": sites}))


def test_collect_and_section(tmp_path):
    tree = tmp_path / "tree" / "proj"
    frames_isin = [["/usr/lib/python3/site-packages/torch/functional.py", "10", "isin"],
                   [f"{tree}/model/gen.py", "42", "generate"], [f"{tree}/train.py", "7", "<module>"]]
    write_record(tmp_path / "rec", 11, {
        "aten::isin.Tensor_Tensor": {"Long,Long": 4},
        "aten::mm": {"Float,Float": 6},
        "aten::_scaled_dot_product_efficient_attention": {"Float,Float,Float": 2},
        "aten::add.Tensor": {"Double,Double": 1, "Float,Float": 3},
    }, {"aten::isin.Tensor_Tensor": frames_isin, "aten::_scaled_dot_product_efficient_attention": []})
    collected = operators.collect(tmp_path / "rec", tree)
    assert collected["steps"] == 2 and collected["processes"] == 1
    assert collected["sites"]["aten::isin.Tensor_Tensor"] == "model/gen.py:42 (generate)"
    assert collected["sites"]["aten::_scaled_dot_product_efficient_attention"] == "backward (autograd)"
    sec = operators.section(collected, "2.2.0")
    rows = {r["op"]: r for r in sec["fallback"]}
    assert set(rows) == {"aten::isin.Tensor_Tensor_out", "aten::_scaled_dot_product_efficient_attention"}
    assert rows["aten::isin.Tensor_Tensor_out"]["per_step"] == 2.0
    assert rows["aten::isin.Tensor_Tensor_out"]["site"] == "model/gen.py:42 (generate)"
    assert sec["cpu_cannot_run"] == ["aten::_scaled_dot_product_efficient_attention"]
    assert sec["wide_dtypes"] == [{"op": "aten::add.Tensor", "dtypes": ["Double"], "count": 4}]
    assert sec["supported"] == 2  # mm, add
    later = operators.section(collected, "2.1.0.post10")  # a later release added isin's kernel
    assert [r["op"] for r in later["fallback"]] == ["aten::_scaled_dot_product_efficient_attention"]
    old = operators.section(collected, "1.8.1")
    assert old["release_known"] is False and old["fallback"] is None and "older than our data" in old["release_choice"]
    lines = operators.summary_lines(sec)
    assert lines[0].startswith("operators on the NPU host (torch_npu 2.2.0, exact): 2 run on the CPU")
    assert any("first at model/gen.py:42 (generate)" in line for line in lines)
    assert any("float64/complex tensors on the device: aten::add.Tensor (Double)" in line for line in lines)
    md = "\n".join(operators.markdown_lines(sec))
    assert "| `aten::isin.Tensor_Tensor_out` | 4 | 2.0 | Long | model/gen.py:42 (generate) | yes |" in md


def test_counts_of_two_processes_are_per_process_per_step(tmp_path):
    for pid in (1, 2):
        write_record(tmp_path / "rec", pid, {"aten::isin.Tensor_Tensor": {"Long,Long": 4}}, {}, steps=2)
    sec = operators.section(operators.collect(tmp_path / "rec"), "2.2.0")
    assert sec["processes"] == 2 and sec["fallback"][0]["count"] == 8 and sec["fallback"][0]["per_step"] == 2.0
    assert any("summed over 2 processes" in n for n in sec["notes"])


def test_why_not_checked():
    assert operators.why_not_checked("emulated-npu:0", True, True) is None
    assert operators.why_not_checked("emulated-npu:0", True, False) == operators.OFF_REASON
    assert "real NPU host" in operators.why_not_checked("npu:0", False, True)
    assert "not the emulated npu" in operators.why_not_checked("cpu", False, True)
    assert to_markdown({"verdict": "pass", "items": [], "operators": operators.not_checked("x")}).count(
        "Not checked: x.") == 1


def test_a_cpu_validation_says_not_checked(tmp_path):
    import shutil

    tree = tmp_path / "trainer"
    shutil.copytree(TRAINER, tree)
    golden = tmp_path / "golden.pt"
    res = CliRunner().invoke(cli, ["validate", "capture", "--root", str(tree), "--steps", "2", "-o", str(golden),
                                   "--", *TRAIN])
    assert res.exit_code == 0, res.output
    (tmp_path / "env.json").write_text("{}")
    res = CliRunner().invoke(cli, ["validate", "run", str(tree), "--device", "cpu", "--golden", str(golden),
                                   "--environment", str(tmp_path / "env.json"), "--no-ddp",
                                   "--report-dir", str(tmp_path / "out"), "--", *TRAIN])
    report = json.loads((tmp_path / "out" / "validation-report.json").read_text())
    assert report["operators"]["checked"] is False
    assert "not the emulated npu" in report["operators"]["why"]
    assert "operators on the NPU host: not checked (the run used cpu, not the emulated npu" in res.output


def test_an_npu_device_that_is_the_emulated_one_says_how_to_record():
    from ascend_migrate.validate.runner import ValidateOptions, _operators_section

    sec = _operators_section(ValidateOptions(device="npu:0"), None, True)
    assert sec["checked"] is False and "--device emulated-npu" in sec["why"]
    sec = _operators_section(ValidateOptions(device="npu:0"), None, False)
    assert "real NPU host" in sec["why"]
