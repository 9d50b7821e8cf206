"""`validate` runs a transfer port on the npu stand-in only when a test puts it there, and every
report made that way says it was an emulated npu; the skill generator does not take it as an
NPU pass."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from chain.chainhelpers import am, copy_project

pytestmark = pytest.mark.needs_torch

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "cifar_trainer"


def test_report_on_the_standin_says_emulated_and_the_skill_refuses_it(npu_standin, tmp_path):
    original = copy_project(EXAMPLE, tmp_path / "original")
    port = tmp_path / "port"
    assert am("migrate", original, "--output", port).exit_code == 0  # transfer, the default
    golden = tmp_path / "golden.pt"
    res = am("validate", "capture", "train.py:validation_entry", "--root", original, "-o", golden)
    assert res.exit_code == 0, res.output
    ran = npu_standin.run(["-m", "ascend_migrate", "validate", "run", str(port), "--device", "npu:0",
                           "--golden", str(golden), "--no-ddp"], cwd=tmp_path, autocast=False, timeout=600)
    assert "emulated npu (CPU kernels)" in ran.stdout, ran.stdout[-3000:] + ran.stderr[-3000:]
    report = json.loads((port / ".ascend-migrate" / "validation-report.json").read_text())
    prov = report["provenance"]
    assert prov["device_kind"] == "emulated-npu" and prov["emulated"] == "emulated npu (CPU kernels)"
    assert "emulated npu (CPU kernels)" in report["verdict_note"]
    golden_items = {i["id"]: i["status"] for i in report["items"]}
    assert golden_items["golden-outputs"] == "pass", report["items"]
    md = (port / ".ascend-migrate" / "validation-report.md").read_text()
    assert "emulated npu (CPU kernels)" in md.split("\n", 4)[2]
    if report["verdict"] == "pass":
        res = am("skill", port, "--model", "cifar", "--out-root", tmp_path / "skills", "--original", original)
        assert res.exit_code == 2 and "emulated npu" in res.output, res.output
        assert not (tmp_path / "skills" / "cifar").exists()
    else:  # the reasons are the port's, never the stand-in's
        assert all("emulated" not in r for r in report["reasons"]), report["reasons"]


def test_a_plain_run_is_not_marked(tmp_path, monkeypatch):
    """Without the stand-in nothing is called emulated (no torch_npu, no marker variable)."""
    from ascend_migrate.validate.runner import emulated_npu

    monkeypatch.delenv("ASCEND_MIGRATE_EMULATED_NPU", raising=False)
    assert "torch_npu" not in sys.modules
    assert emulated_npu() is False
    monkeypatch.setenv("ASCEND_MIGRATE_EMULATED_NPU", "1")
    assert emulated_npu() is True
