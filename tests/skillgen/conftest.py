"""Inputs for the model-skill generator tests."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ascend_migrate.validate import provenance

PASSING_REPORT = {
    "schema": "ascend-migrate/validation-report/1",
    "verdict": "pass",
    "items": [
        {"id": "static-imports", "title": "entry points import torch_npu", "status": "pass", "severity": "error"},
        {"id": "golden-compare", "title": "golden outputs", "status": "pass", "severity": "error",
         "detail": "cosine 0.99998, max abs err 3.1e-05"},
        {"id": "ddp-smoke", "title": "2-process DDP run", "status": "skip", "severity": "error",
         "detail": "single card"},
    ],
    "thresholds": {"cosine_min": 0.99, "max_abs_err": 0.001, "loss_curve": {"steps": 50, "rel_tol": 0.02}},
    "environment": {"python": "3.10.14", "torch": "2.1.0", "torch_npu": "2.1.0.post8",
                    "cann": "8.0.RC3", "numpy": "1.26.4", "device": "Ascend910B3"},
}

SCAN = {
    "root": "project",
    "findings": [
        {"rule": "CU101", "path": "train.py", "line": 4, "col": 0, "end_line": 4, "end_col": 10,
         "message": ".cuda() call", "severity": "warning", "symbol": "torch.nn.Module.cuda",
         "fixes": [{"style": "transfer", "edits": []}, {"style": "agnostic", "edits": []}]},
        {"rule": "DS003", "path": "train.py", "line": 5, "col": 8, "end_line": 5, "end_col": 30,
         "message": "nn.DataParallel is not supported on Ascend", "severity": "error",
         "symbol": "torch.nn.DataParallel", "fixes": []},
    ],
    "entry_points": [{"path": "train.py", "line": 7, "kind": "main-guard",
                      "has_transfer_import": False, "imports_torch_npu": False}],
    "frameworks": ["pytorch"],
}

CHANGES = {
    "style": "transfer",
    "changes": [
        {"file": "train.py", "start_line": 1, "end_line": 1, "rule": "EX001", "operation": "insert",
         "message": "import torch_npu and transfer_to_npu before other imports",
         "after": "import torch_npu\nfrom torch_npu.contrib import transfer_to_npu"},
        {"file": "train.py", "start_line": 5, "end_line": 5, "rule": "DS003", "operation": "replace",
         "message": "DataParallel to DistributedDataParallel",
         "before": "model = nn.DataParallel(model)", "after": "model = DDP(model, device_ids=[rank])"},
    ],
}


class Inputs:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.project = base / "project"
        self.project.mkdir()
        (self.project / "train.py").write_text(
            "import torch\nimport torch.nn as nn\n\nmodel = nn.Linear(2, 2).cuda()\n"
            "model = nn.DataParallel(model)\n\nif __name__ == '__main__':\n    pass\n",
            encoding="utf-8",
        )
        (self.project / "requirements.txt").write_text("torch\n", encoding="utf-8")
        self.out = base / "skills"
        # the unported checkout the port started from (here: the same files)
        self.original = base / "original"
        shutil.copytree(self.project, self.original)

    def provenance(self, device: str = "npu:0") -> dict:
        manifest = provenance.tree_manifest(self.project)
        return {"device": device, "device_kind": device.split(":")[0],
                "host": {"python": "3.10.14", "torch": "2.1.0", "torch_npu": "2.1.0.post8", "cann": "8.0.RC3"},
                "golden": {"given": True, "compared": True, "sha256": "0" * 64, "entry": "train.py:validation_entry",
                           "kind": "model", "seed": 0},
                "tree": {"algorithm": provenance.TREE_HASH_ALGO, "sha256": provenance.manifest_hash(manifest),
                         "files": len(manifest), "excluded": [], "manifest": manifest}}

    def signed(self, data):
        """A report as `ascend-migrate validate` writes it: with provenance of the tree now, signed."""
        if isinstance(data, dict):
            data = dict(data)
            data.setdefault("provenance", self.provenance())
            provenance.sign(data)
        return data

    def write(self, name: str, data) -> Path:
        path = self.base / name
        if isinstance(data, (dict, list)):
            path.write_text(json.dumps(data), encoding="utf-8")
        elif isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")
        return path

    def report(self, **overrides) -> Path:
        data = json.loads(json.dumps(PASSING_REPORT))
        data.update(overrides)
        return self.write("report.json", self.signed(data))

    def scan(self, data=None) -> Path:
        return self.write("scan.json", SCAN if data is None else data)

    def changes(self, data=None) -> Path:
        return self.write("changes.json", CHANGES if data is None else data)

    def args(self, model="ResNet-50", **extra) -> list[str]:
        argv = [str(self.project), "--model", model, "--out-root", str(self.out),
                "--report", str(extra.pop("report", None) or self.report()),
                "--scan", str(extra.pop("scan", None) or self.scan()),
                "--changes", str(extra.pop("changes", None) or self.changes()),
                "--original", str(extra.pop("original", None) or self.original)]
        for key, value in extra.items():
            flag = "--" + key.replace("_", "-")
            argv += [flag] if value is True else [flag, str(value)]
        return argv


@pytest.fixture
def inputs(tmp_path) -> Inputs:
    return Inputs(tmp_path)


def tree(root: Path) -> dict[str, bytes]:
    """Every file under root with its content (for 'nothing was written' assertions)."""
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def snapshot():
    return tree
