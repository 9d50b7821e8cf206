"""Precision modes: capture and validate pin TF32/HF32 and the deterministic switches, record them,
and a change between capture and validate is a provenance mismatch, not a numeric failure.

On a CPU build the TF32 switches exist as plain flags (they change nothing on the CPU), so the
pinning and recording are real here; the entry below reads the flag to show what it ran under."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.knowledge.loader import KnowledgeError
from ascend_migrate.validate import precision, runner

from vhelpers import make_scan, write_tree

ENTRY = """
    import json
    import os

    import torch

    def validation_entry(device="cpu"):
        # what the entry saw, for the test to read back; outputs do not depend on it
        with open(os.environ["SEEN_FILE"], "w") as fh:
            json.dump({"conv_tf32": torch.backends.cudnn.allow_tf32,
                       "matmul_tf32": torch.backends.cuda.matmul.allow_tf32,
                       "deterministic": torch.are_deterministic_algorithms_enabled(),
                       "benchmark": torch.backends.cudnn.benchmark}, fh)
        torch.manual_seed(0)
        return torch.nn.Conv2d(3, 4, 3), (torch.randn(2, 3, 8, 8),)
    """


def test_knowledge_file_holds_the_documented_defaults_with_sources():
    switches = {s.id: s for s in precision.load_switches()}
    # the defaults that make a CNN golden and an NPU run differ from true fp32
    assert switches["cudnn.allow_tf32"].default is True and switches["cudnn.allow_tf32"].device == "cuda"
    assert switches["npu.conv.allow_hf32"].default is True and switches["npu.conv.allow_hf32"].device == "npu"
    assert switches["cuda.matmul.allow_tf32"].default is False
    assert all(s.source.strip() and s.affects.strip() for s in switches.values())
    assert all(not s.fp32 for k, s in switches.items() if "allow_" in k)  # fp32 mode: every reduced format off
    assert all(s.reduced for k, s in switches.items() if "allow_" in k)


def test_a_malformed_switches_file_is_refused(tmp_path):
    bad = tmp_path / "p.yaml"
    bad.write_text("schema: ascend-migrate/precision-switches/1\nmodes: {fp32: a, reduced: b}\n"
                   "switches:\n  - {id: x, path: a.b, device: gpu, default: true, fp32: false, reduced: true,"
                   " affects: y, source: z}\n")
    with pytest.raises(KnowledgeError, match="device"):
        precision.load_switches(bad)


def test_mismatches_compare_only_switches_both_sides_recorded():
    cuda_golden = {"mode": "reduced", "switches": {"cudnn.allow_tf32": True, "npu.conv.allow_hf32": None}}
    npu_run = {"mode": "reduced", "switches": {"cudnn.allow_tf32": True, "npu.conv.allow_hf32": True}}
    assert precision.mismatches(cuda_golden, npu_run) == []
    fp32_run = {"mode": "fp32", "switches": {"cudnn.allow_tf32": False, "npu.conv.allow_hf32": False}}
    found = precision.mismatches(cuda_golden, fp32_run)
    assert found == ["precision mode: golden 'reduced', run 'fp32'", "cudnn.allow_tf32: golden True, run False"]
    assert "records no precision switches" in precision.mismatches(None, fp32_run)[0]
    assert precision.thresholds_mismatch("fp32", "reduced").startswith("the thresholds assume precision mode 'fp32'")
    assert precision.thresholds_mismatch("fp32", "fp32") is None


@pytest.mark.needs_torch
def test_pinned_sets_the_mode_and_restores_the_process():
    import torch

    before = precision.snapshot()
    with precision.pinned("reduced") as rec:
        assert torch.backends.cuda.matmul.allow_tf32 is True and torch.backends.cudnn.allow_tf32 is True
        assert rec["mode"] == "reduced" and rec["switches"]["cuda.matmul.allow_tf32"] is True
    with precision.pinned("fp32") as rec:
        assert torch.backends.cudnn.allow_tf32 is False and torch.are_deterministic_algorithms_enabled()
        assert rec["switches"]["npu.conv.allow_hf32"] is None  # no torch_npu in this build: absent, not False
    assert precision.snapshot() == before


def _invoke(*args):
    return CliRunner().invoke(cli, ["validate", *[str(a) for a in args]], catch_exceptions=False)


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = write_tree(tmp_path / "p", {"entry.py": ENTRY})
    seen = tmp_path / "seen.json"
    monkeypatch.setenv("SEEN_FILE", str(seen))
    monkeypatch.setattr(runner, "_scan", lambda path: (make_scan(root), None))
    return root, seen


def _reduced_thresholds(tmp_path: Path) -> Path:
    default = (Path(precision.SWITCHES_FILE).parent / "thresholds.yaml").read_text()
    assert "\nprecision: fp32\n" in default
    out = tmp_path / "reduced-thresholds.yaml"
    out.write_text(default.replace("\nprecision: fp32\n", "\nprecision: reduced\n"))
    return out


@pytest.mark.needs_torch
def test_tf32_golden_compared_with_the_same_setting_passes_and_is_recorded(project, tmp_path):
    from ascend_migrate.validate.thresholds import load_thresholds

    root, seen = project
    golden = tmp_path / "g.pt"
    res = _invoke("capture", "entry.py:validation_entry", "--root", root, "-o", golden, "--precision", "reduced")
    assert res.exit_code == 0, res.output
    assert json.loads(seen.read_text()) == {"conv_tf32": True, "matmul_tf32": True, "deterministic": True,
                                            "benchmark": False}
    report = runner.validate_project(root, runner.ValidateOptions(
        environment={}, golden=golden, precision="reduced", thresholds=load_thresholds(_reduced_thresholds(tmp_path))))
    items = {i["id"]: i for i in report["items"]}
    assert report["verdict"] == "pass", report["reasons"]
    assert items["precision-modes"]["status"] == "pass" and items["golden-outputs"]["status"] == "pass"
    prec = report["provenance"]["precision"]
    assert prec["mode"] == "reduced" and prec["thresholds_assume"] == "reduced" and prec["mismatch"] == []
    assert prec["golden"]["switches"]["cuda.matmul.allow_tf32"] is True
    assert prec["run"]["switches"]["cuda.matmul.allow_tf32"] is True
    assert report["provenance"]["golden"]["precision"]["mode"] == "reduced"
    assert report["options"]["precision"] == "reduced"


@pytest.mark.needs_torch
def test_changing_the_switch_between_capture_and_validate_is_a_provenance_mismatch(project, tmp_path):
    root, seen = project
    golden = tmp_path / "g.pt"
    assert _invoke("capture", "entry.py:validation_entry", "--root", root, "-o", golden,
                   "--precision", "reduced").exit_code == 0
    report = runner.validate_project(root, runner.ValidateOptions(environment={}, golden=golden))  # fp32 default
    assert json.loads(seen.read_text())["conv_tf32"] is False  # the run really was pinned to fp32
    items = {i["id"]: i for i in report["items"]}
    assert report["verdict"] == "fail"
    assert items["precision-modes"]["status"] == "fail"
    assert "provenance mismatch" in items["precision-modes"]["summary"]
    assert "cudnn.allow_tf32: golden True, run False" in items["precision-modes"]["summary"]
    # not a numeric failure: the outputs are identical on CPU, and they are not judged at all
    assert items["golden-outputs"]["status"] == "skip" and items["loss-curve"]["status"] == "skip"
    assert any(r.startswith("precision-modes failed: provenance mismatch") for r in report["reasons"])
    assert not any(r.startswith("golden-outputs") for r in report["reasons"])
    assert report["provenance"]["precision"]["mismatch"]
    from ascend_migrate.validate.report import to_markdown
    assert "MISMATCH: precision mode: golden 'reduced', run 'fp32'" in to_markdown(report)


@pytest.mark.needs_torch
def test_default_capture_and_validate_agree_in_fp32(project, tmp_path):
    root, seen = project
    golden = tmp_path / "g.pt"
    assert _invoke("capture", "entry.py:validation_entry", "--root", root, "-o", golden).exit_code == 0
    assert json.loads(seen.read_text())["conv_tf32"] is False  # TF32 off although torch's default is on
    report = runner.validate_project(root, runner.ValidateOptions(environment={}, golden=golden))
    assert report["verdict"] == "pass", report["reasons"]
    assert report["provenance"]["precision"]["mode"] == "fp32"
    # reduced mode against thresholds set for fp32: the thresholds do not fit the run
    report = runner.validate_project(root, runner.ValidateOptions(environment={}, golden=golden, precision="reduced"))
    items = {i["id"]: i for i in report["items"]}
    assert items["precision-modes"]["status"] == "fail"
    assert "the thresholds assume precision mode 'fp32'" in items["precision-modes"]["summary"]


@pytest.mark.needs_torch
def test_an_entry_that_sets_a_switch_itself_is_recorded(tmp_path):
    from ascend_migrate.validate.entry import run_entry

    root = write_tree(tmp_path / "p", {"entry.py": """
        import torch

        def validation_entry(device="cpu"):
            torch.backends.cudnn.benchmark = True  # the project's own speed setting
            return torch.nn.Linear(3, 2), (torch.ones(1, 3),)
        """})
    run = run_entry("entry.py:validation_entry", root, "cpu")
    assert run.precision["mode"] == "fp32" and run.precision["switches"]["cudnn.benchmark"] is False
    assert run.precision["changed_by_entry"] == {"cudnn.benchmark": True}
    import torch
    assert torch.backends.cudnn.benchmark is False  # restored after the run
