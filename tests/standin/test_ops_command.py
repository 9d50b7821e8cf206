"""`ascend-migrate ops`: a CUDA-style script run on the emulated npu (transfer imports injected in
memory, nothing written into the project) and its operators judged against a release's data."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.emulated_npu import build as emu
from ascend_migrate.validate.ops_cli import ops_command

pytestmark = pytest.mark.needs_torch

PROJECT = Path(__file__).resolve().parent / "projects" / "ops_probe"


def run(npu_standin, monkeypatch, *args):
    monkeypatch.setenv(emu.BUILD_DIR_ENV, str(npu_standin.build_dir))
    before = sorted(p.name for p in PROJECT.iterdir())
    result = CliRunner().invoke(ops_command, ["--root", str(PROJECT), "--format", "json", *args,
                                              "--", "python", "train.py"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in PROJECT.iterdir()) == before  # nothing written into the project
    return json.loads(result.output[result.output.index("{"):])


def test_a_release_without_the_kernel_names_the_fallback(npu_standin, monkeypatch):
    report = run(npu_standin, monkeypatch, "--torch-npu", "2.2.0", "--steps", "2")
    assert report["release"] == "2.2.0" and report["release_known"] and report["stopped_by"] == "steps"
    assert report["steps"] == 2
    isin = [r for r in report["fallback"] if r["op"] == "aten::isin.Tensor_Tensor_out"]
    assert isin and isin[0]["count"] >= 2 and isin[0]["per_step"] >= 1 and isin[0]["cpu_kernel"] is True
    assert isin[0]["dispatched_as"] == ["aten::isin.Tensor_Tensor"]
    assert any(r["op"] == "aten::mm" for r in report["supported"])
    assert report["dtypes_checked"] is False and "not checked" in report["not_checked"]


def test_a_later_release_has_it(npu_standin, monkeypatch):
    report = run(npu_standin, monkeypatch, "--torch-npu", "2.1.0.post10", "--seconds", "60")
    assert not [r for r in report["fallback"] if "isin" in r["op"]]
    assert any("isin" in r["op"] for r in report["supported"])


def test_an_older_release_is_named_not_guessed(npu_standin, monkeypatch):
    report = run(npu_standin, monkeypatch, "--torch-npu", "1.8.1", "--steps", "1")
    assert report["release"] == "1.8.1" and report["release_known"] is False
    assert report["fallback"] is None and "older than our data" in report["release_choice"]


def test_a_command_that_fails_gives_a_partial_answer_and_exit_1(npu_standin, monkeypatch, tmp_path):
    """A CUDA original that stops on the NPU host (here: a capability query answered None) ran only
    part of its operators: the answer says so and does not exit 0 as if it were complete."""
    (tmp_path / "train.py").write_text(
        "import torch\n"
        "x = torch.ones(4, device='cuda') * 2\n"
        "major, minor = torch.cuda.get_device_capability()\n")
    monkeypatch.setenv(emu.BUILD_DIR_ENV, str(npu_standin.build_dir))
    result = CliRunner().invoke(ops_command, ["--root", str(tmp_path), "--torch-npu", "2.2.0", "--steps", "1",
                                              "--", "python", "train.py"])
    assert result.exit_code == 1, result.output
    assert "(of the part that ran)" in result.output
    assert "did not run to its end or to the asked steps" in result.output and "TypeError" in result.output
