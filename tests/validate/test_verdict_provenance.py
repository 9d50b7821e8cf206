"""One verdict rule, confirmations, provenance, report checksum, tensor outputs from train entries."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.validate import provenance, runner
from ascend_migrate.validate.report import to_markdown
from ascend_migrate.validate.verdict import can_confirm, decide

from vhelpers import finding, make_scan, write_tree


def _item(id_, severity, status):
    return {"id": id_, "severity": severity, "status": status, "summary": "s"}


def test_decide_blocks_on_error_items_only_and_lists_open_warnings():
    d = decide([_item("a", "error", "pass"), _item("b", "warning", "fail"), _item("c", "warning", "manual-pending")])
    assert d.verdict == "pass" and d.reasons == []
    assert [w.split()[0] for w in d.open_warnings] == ["b", "c"]
    manual = dict(_item("a", "error", "manual-pending"), kind="manual")
    d = decide([manual, _item("b", "error", "fail"), _item("c", "error", "manual-pending")])
    assert d.verdict == "fail" and [r.split()[0] for r in d.reasons] == ["a", "b", "c"]
    assert "a person's decision" in d.reasons[0] and "undecided" in d.reasons[2]
    # what a report says never carries the confirm flag (a model skill quotes reports)
    assert not any("--confirm" in r for r in d.reasons + d.open_warnings)


def test_confirmation_rules():
    assert can_confirm("manual", "manual-pending") is None
    for kind in ("static", "dynamic"):
        for status in ("fail", "manual-pending", "skip"):
            assert "only evidence clears" in can_confirm(kind, status)
    assert "nothing to confirm" in can_confirm("manual", "pass")


def invoke(*args):
    return CliRunner().invoke(cli, ["validate", *map(str, args)], catch_exceptions=False)


@pytest.fixture
def warned_project(tmp_path, monkeypatch):
    """A tree whose only problems are a failed warning item (fp64) and a failed error item (DataParallel)."""
    root = write_tree(tmp_path / "p", {"t.py": "import torch\nx = torch.zeros(2, dtype=torch.float64)\n"
                                               "m = torch.nn.DataParallel(m)\n"})
    scan = make_scan(root, [finding("PR003", "t.py", 2, 4), finding("DS003", "t.py", 3, 4, severity="error")])
    monkeypatch.setattr(runner, "_scan", lambda path: (scan, None))
    env = tmp_path / "env.json"
    env.write_text("{}")
    return root, env


def _report(root):
    return json.loads((root / ".ascend-migrate" / "validation-report.json").read_text())


def test_only_manual_items_take_a_confirmation(warned_project):
    root, env = warned_project
    res = invoke(root, "--environment", env, "--confirm", "stochastic-outputs")
    assert res.exit_code == 2 and "--note" in res.output
    res = invoke(root, "--environment", env, "--confirm", "fp64-usage", "--note", "float64 only in CPU-side statistics")
    assert res.exit_code == 2 and "fp64-usage (static)" in res.output and "only manual items" in res.output
    res = invoke(root, "--environment", env, "--confirm", "stochastic-outputs", "--note", "no sampling in this model")
    assert res.exit_code == 1  # DataParallel still fails: a confirmation never touches it
    report = _report(root)
    items = {i["id"]: i for i in report["items"]}
    assert items["stochastic-outputs"]["status"] == "confirmed"
    assert items["stochastic-outputs"]["confirmed"]["note"] == "no sampling in this model"
    assert items["fp64-usage"]["status"] == "fail" and items["no-dataparallel"]["status"] == "fail"
    assert decide(report["items"]).verdict == report["verdict"] == "fail"


def test_report_carries_provenance_and_a_checksum(warned_project, tmp_path):
    root, env = warned_project
    env.write_text(json.dumps({"stages": [
        {"id": "python", "details": {"python": "3.10.14", "machine": "aarch64"}},
        {"id": "torch", "details": {"version": "2.6.0"}},
        {"id": "torch_npu", "details": {"version": "2.6.0.post5"}},
        {"id": "cann", "details": {"version": "8.1.RC1", "driver_version": "24.1.0"}},
        {"id": "driver", "details": {"npu_smi": {"version": "24.1.0", "chips": [{"name": "910B3"}]}}}]}))
    invoke(root, "--environment", env, "--device", "cpu")
    report = _report(root)
    prov = report["provenance"]
    assert prov["host"] == {"python": "3.10.14", "machine": "aarch64", "torch": "2.6.0", "torch_npu": "2.6.0.post5",
                            "cann": "8.1.RC1", "driver": "24.1.0", "npu_model": "910B3"}
    assert prov["device_kind"] == "cpu"
    assert prov["golden"] == {"given": False, "compared": False, "why_not": "no golden file given (--golden)"}
    assert prov["tree"]["sha256"] == provenance.tree_hash(root)
    assert prov["tree"]["files"] == 1  # t.py; the report folder is not part of the tree
    assert provenance.check_signature(report) is None
    failed = next(i for i in report["items"] if i["status"] == "fail")
    failed["status"] = "pass"
    assert "edited" in provenance.check_signature(report)
    assert "## Provenance" in to_markdown(_report(root))


def test_tree_hash_ignores_own_outputs_and_sees_edits(tmp_path):
    root = write_tree(tmp_path / "t", {"a.py": "x = 1\n", "data/table.json": '{"rows": [1, 2]}\n'})
    before = provenance.tree_hash(root)
    write_tree(root, {"scan.json": '{\n  "schema": "ascend-migrate/scan/1",\n  "findings": []\n}\n',
                      "ascend-migrate-changes.csv": "file\n", ".ascend-migrate/x.json": "{}",
                      "__pycache__/a.cpython-311.pyc": "junk"})
    assert provenance.tree_hash(root) == before
    (root / "data" / "table.json").write_text('{"rows": [1, 3]}\n')
    after = provenance.tree_manifest(root)
    assert provenance.manifest_hash(after) != before
    res = invoke("own-files", root)
    assert res.exit_code == 0
    assert set(res.output.split()) == {"scan.json", "ascend-migrate-changes.csv", ".ascend-migrate/x.json"}


@pytest.mark.needs_torch
def test_capture_accepts_a_tensor_as_train_outputs(tmp_path):
    write_tree(tmp_path, {"entry.py": """
        import torch

        def train_steps(device, steps=2, seed=0):
            w = torch.ones(3, requires_grad=True)
            losses = []
            for _ in range(steps):
                loss = (w * 2).sum()
                loss.backward()
                losses.append(loss.item())
            return {"losses": losses, "outputs": w.detach() * 3}
        """})
    golden = tmp_path / "g.pt"
    res = invoke("capture", "entry.py:train_steps", "--root", tmp_path, "-o", golden)
    assert res.exit_code == 0, res.output
    assert "output output: shape [3]" in res.output
    res = invoke("compare", golden, "--root", tmp_path)
    assert res.exit_code == 0 and "verdict: PASS" in res.output


@pytest.mark.needs_torch
def test_capture_reports_an_entry_that_raises_without_a_traceback(tmp_path):
    write_tree(tmp_path, {"entry.py": """
        def train_steps(device, steps=2, seed=0):
            raise RuntimeError("NVTX functions not installed")
        """})
    res = invoke("capture", "entry.py:train_steps", "--root", tmp_path, "-o", tmp_path / "g.pt")
    assert res.exit_code == 1
    assert "raised RuntimeError: NVTX functions not installed (at entry.py:2)" in res.output
    assert "Traceback" not in res.output


@pytest.mark.needs_torch
def test_files_the_validation_run_writes_are_not_part_of_the_validated_tree(tmp_path, monkeypatch):
    """An entry that writes a log into the tree: the tree hash is the tree before the run."""
    root = write_tree(tmp_path / "p", {"entry.py": """
        import torch

        def validation_entry(device="cpu"):
            with open("run.log", "a") as fh:
                fh.write("ran\\n")
            return torch.nn.Linear(3, 2), (torch.ones(1, 3),)
        """})
    golden = tmp_path / "g.pt"
    assert invoke("capture", "entry.py:validation_entry", "--root", root, "-o", golden).exit_code == 0
    (root / "run.log").unlink()
    before = provenance.tree_hash(root)
    monkeypatch.setattr(runner, "_scan", lambda path: (make_scan(root), None))
    report = runner.validate_project(root, runner.ValidateOptions(environment={}, golden=golden))
    assert (root / "run.log").is_file()
    tree = report["provenance"]["tree"]
    assert tree["written_by_run"] == ["run.log"] and "run.log" in tree["excluded"]
    assert tree["sha256"] == before == provenance.tree_hash(root, tree["excluded"])
