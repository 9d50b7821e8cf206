"""`ascend-migrate validate`: exit codes, report files and schema, confirmations, environment."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.validate import environment as env_mod
from ascend_migrate.validate import runner

from vhelpers import TINY, make_scan, write_tree

pytestmark = pytest.mark.needs_torch  # runs torch

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def clean_project(tmp_path, monkeypatch):
    """A ported project whose scan is clean (the scanner itself is tested elsewhere)."""
    root = write_tree(tmp_path / "proj", {"main.py": "import torch\nif __name__ == '__main__':\n    pass\n"})
    monkeypatch.setattr(runner, "_scan", lambda path: (make_scan(root), None))
    env = tmp_path / "env.json"
    env.write_text(json.dumps({"device": "cpu", "verdict": "ok"}))
    return root, env


def invoke(*args):
    return CliRunner().invoke(cli, ["validate", *map(str, args)], catch_exceptions=False)


def test_pass_writes_json_and_markdown(clean_project):
    root, env = clean_project
    res = invoke(root, "--environment", env)
    assert res.exit_code == 0, res.output
    assert "verdict: PASS" in res.output
    report = json.loads((root / ".ascend-migrate" / "validation-report.json").read_text())
    assert report["schema"] == "ascend-migrate/validation-report/1"
    assert report["verdict"] == "pass"
    assert report["environment"] == {"device": "cpu", "verdict": "ok"}
    assert report["thresholds"]["used"]["outputs"]["cosine_min"] == 0.99
    for item in report["items"]:
        assert set(item) >= {"id", "title", "kind", "severity", "status", "evidence"}
        assert item["status"] in ("pass", "fail", "manual-pending", "confirmed", "skip")
    md = (root / ".ascend-migrate" / "validation-report.md").read_text()
    assert "**Verdict: PASS**" in md and "## Thresholds" in md


def test_report_matches_json_schema(clean_project):
    jsonschema = pytest.importorskip("jsonschema")
    root, env = clean_project
    invoke(root, "--environment", env)
    report = json.loads((root / ".ascend-migrate" / "validation-report.json").read_text())
    schema = {
        "type": "object",
        "required": ["schema", "verdict", "items", "thresholds", "environment"],
        "properties": {
            "schema": {"const": "ascend-migrate/validation-report/1"},
            "verdict": {"enum": ["pass", "fail"]},
            "items": {"type": "array", "items": {
                "type": "object",
                "required": ["id", "title", "kind", "severity", "status", "evidence"],
                "properties": {"kind": {"enum": ["static", "dynamic", "manual"]},
                               "status": {"enum": ["pass", "fail", "manual-pending", "confirmed", "skip"]},
                               "evidence": {"type": "array"}}}},
            "thresholds": {"type": "object"},
            "environment": {"type": "object"},
        },
    }
    jsonschema.validate(report, schema)


def test_fail_exit_code_and_locations(tmp_path, monkeypatch):
    from vhelpers import finding

    root = write_tree(tmp_path / "p", {"t.py": "import torch\nm = torch.nn.DataParallel(m)\n"})
    monkeypatch.setattr(runner, "_scan", lambda path: (make_scan(root, [finding("DS003", "t.py", 2, 4)]), None))
    env = tmp_path / "env.json"
    env.write_text("{}")
    res = invoke(root, "--environment", env)
    assert res.exit_code == 1
    assert "t.py:2: [DS003]" in res.output
    assert "no-dataparallel failed" in res.output


def test_usage_errors_exit_2(clean_project, tmp_path):
    root, env = clean_project
    assert invoke(root, "--device", "gpu0").exit_code == 2
    assert invoke(root, "--confirm", "no-such-item", "--environment", env).exit_code == 2
    bad = tmp_path / "t.yaml"
    bad.write_text("schema: nope\n")
    res = invoke(root, "--thresholds", bad, "--environment", env)
    assert res.exit_code == 2 and "bad thresholds file" in res.output
    assert invoke(tmp_path / "missing").exit_code == 2
    assert invoke("compare", tmp_path / "missing.pt").exit_code == 2


def test_a_manual_question_blocks_until_a_person_decides_it(tmp_path, monkeypatch):
    from vhelpers import finding

    root = write_tree(tmp_path / "p", {"main.py": "x = 1\n", "k.cu": "__global__ void k() {}\n"})
    monkeypatch.setattr(runner, "_scan", lambda path: (make_scan(root, [finding("EX001", "k.cu", 1)]), None))
    env = tmp_path / "env.json"
    env.write_text("{}")
    res = invoke(root, "--environment", env)
    assert res.exit_code == 1 and "cuda-sources-unbuilt awaits a person's decision" in res.output
    res = invoke(root, "--environment", env, "--confirm", "cuda-sources-unbuilt", "--note", "kernel rewritten in model.py")
    assert res.exit_code == 0, res.output
    report = json.loads((root / ".ascend-migrate" / "validation-report.json").read_text())
    item = next(i for i in report["items"] if i["id"] == "cuda-sources-unbuilt")
    assert item["status"] == "confirmed" and "kernel rewritten" in item["evidence"][0]["message"]
    # the decision is bound to the tree: an edit asks for it again
    (root / "main.py").write_text("x = 2\n")
    res = invoke(root, "--environment", env)
    assert res.exit_code == 1, res.output
    report = json.loads((root / ".ascend-migrate" / "validation-report.json").read_text())
    item = next(i for i in report["items"] if i["id"] == "cuda-sources-unbuilt")
    assert item["status"] == "manual-pending"
    assert "the tree changed since it was confirmed" in item["evidence"][0]["message"]


def test_a_confirmation_does_not_travel_to_another_host(tmp_path, monkeypatch):
    from vhelpers import finding

    from ascend_migrate.validate import confirmations

    root = write_tree(tmp_path / "p", {"main.py": "x = 1\n", "k.cu": "__global__ void k() {}\n"})
    monkeypatch.setattr(runner, "_scan", lambda path: (make_scan(root, [finding("EX001", "k.cu", 1)]), None))
    env = tmp_path / "env.json"
    env.write_text("{}")
    res = invoke(root, "--environment", env, "--confirm", "cuda-sources-unbuilt", "--note", "built by the Makefile only")
    assert res.exit_code == 0, res.output
    monkeypatch.setattr(confirmations, "host_identity", lambda: {"name": "npu-node-7", "id": "f" * 32})
    res = invoke(root, "--environment", env)
    assert res.exit_code == 1
    assert "confirmed on another host" in res.output and "npu-node-7" in res.output


@pytest.mark.parametrize("item", ["cuda-sources-handled", "migrated-code-executed", "loss-curve", "no-nccl"])
def test_confirm_is_refused_for_automatic_items(tmp_path, item):
    root = write_tree(tmp_path / "p", {"main.py": "x = 1\n"})
    env = tmp_path / "env.json"
    env.write_text("{}")
    res = invoke(root, "--environment", env, "--confirm", item, "--note", "ok")
    assert res.exit_code == 2
    assert "--confirm refused" in res.output and "only manual items" in res.output
    assert not (root / ".ascend-migrate" / "validation-confirmations.json").exists()


def test_a_recorded_confirmation_of_an_automatic_item_is_ignored(tmp_path, monkeypatch):
    """A confirmations file written by an older version (or by hand) never clears an automatic item."""
    from vhelpers import finding

    root = write_tree(tmp_path / "p", {"main.py": "import torch\nmodel = torch.nn.DataParallel(m)\n"})
    monkeypatch.setattr(runner, "_scan", lambda path: (make_scan(root, [finding("DS003", "main.py", 2, 8, severity="error")]), None))
    state = root / ".ascend-migrate"
    state.mkdir()
    (state / "validation-confirmations.json").write_text(json.dumps(
        {"schema": "ascend-migrate/validation-confirmations/1",
         "confirmed": {"no-dataparallel": {"at": "2026-01-01T00:00:00+00:00", "note": "ok"}}}))
    report = runner.validate_project(root, runner.ValidateOptions(environment={}))
    item = next(i for i in report["items"] if i["id"] == "no-dataparallel")
    assert item["status"] == "fail" and report["verdict"] == "fail"
    assert any(r["id"] == "no-dataparallel" for r in report["confirmations_refused"])


def test_missing_scanner_never_passes(tmp_path, monkeypatch):
    root = write_tree(tmp_path / "p", {"main.py": "x = 1\n"})
    monkeypatch.setattr(runner, "_scan", lambda path: (None, "ModuleNotFoundError: engine"))
    report = runner.validate_project(root, runner.ValidateOptions(environment={}))
    assert report["verdict"] == "fail"
    assert report["scan"]["available"] is False


def test_capture_and_compare_commands(tmp_path):
    golden = tmp_path / "g.pt"
    res = invoke("capture", "tiny_model.py:model_entry", "--root", TINY, "-o", golden, "--seed", "1")
    assert res.exit_code == 0, res.output
    res = invoke("compare", golden, "--root", TINY)
    assert res.exit_code == 0 and "verdict: PASS" in res.output and "cosine_min=0.99" in res.output
    res = invoke("compare", golden, "--root", TINY, "--autocast", "bf16", "--dtype", "fp32", "--json-out", tmp_path / "c.json")
    assert res.exit_code == 1
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["verdict"] == "fail" and data["thresholds"]["outputs"]["max_abs"] == 0.001


def test_full_run_with_golden_and_ddp(tmp_path, monkeypatch):
    """validate PATH with a golden train capture: loss curve compared and the DDP smoke run used."""
    golden = tmp_path / "train.pt"
    assert invoke("capture", "tiny_model.py:train_steps", "--root", TINY, "-o", golden, "--steps", "3").exit_code == 0
    monkeypatch.setattr(runner, "_scan", lambda path: (make_scan(TINY), None))
    env = tmp_path / "env.json"
    env.write_text("{}")
    res = invoke(TINY, "--golden", golden, "--ddp-entry", "tiny_model.py:ddp_train", "--ddp-steps", "2",
                 "--environment", env, "--report-dir", tmp_path / "out", "--format", "json")
    report = json.loads(res.output)
    status = {i["id"]: i["status"] for i in report["items"]}
    assert status["loss-curve"] == "pass" and status["golden-outputs"] == "skip"
    assert status["ddp-smoke"] == "pass", next(i for i in report["items"] if i["id"] == "ddp-smoke")
    assert res.exit_code == 0 and report["verdict"] == "pass"


def test_environment_never_crashes(monkeypatch):
    data = env_mod.collect_environment("cpu", timeout_s=120)
    assert isinstance(data, dict)
    monkeypatch.setattr(env_mod.sys, "executable", "/nonexistent/python")
    assert "error" in env_mod.collect_environment("cpu")


def test_script_runs_from_a_checkout(tmp_path):
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "run_validation.py"), "checklist", "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert any(i["id"] == "ddp-smoke" for i in json.loads(proc.stdout))


def test_validate_import_does_not_import_torch():
    code = ("import sys, ascend_migrate.cli, ascend_migrate.validate.cli, ascend_migrate.validate.runner;"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr


def test_failing_output_is_named_once_per_line(tmp_path, monkeypatch):
    """The evidence carries the output name in its own field; text and Markdown name it once."""
    golden = tmp_path / "g.pt"
    assert invoke("capture", "tiny_model.py:model_entry", "--root", TINY, "-o", golden).exit_code == 0
    monkeypatch.setattr(runner, "_scan", lambda path: (make_scan(TINY), None))
    env = tmp_path / "env.json"
    env.write_text("{}")
    res = invoke(TINY, "--golden", golden, "--autocast", "bf16", "--dtype", "fp32", "--no-ddp",
                 "--environment", env, "--report-dir", tmp_path / "out")
    assert res.exit_code == 1
    lines = [ln for ln in res.output.splitlines() if "output '" in ln and "max_abs" in ln]
    assert lines and all(ln.count("output '") == 1 for ln in lines), lines
    md = (tmp_path / "out" / "validation-report.md").read_text()
    evidence = [ln for ln in md.splitlines() if ln.startswith("- output `")]
    assert evidence and not any("output '" in ln for ln in evidence), evidence
