"""Fixtures for the plugin tests: repository paths, the pinned validators, a generated skill."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ci_gates import cache_dir, cache_lock, unavailable

REPO = Path(__file__).resolve().parents[2]
SKILLS = ("cuda-to-npu", "npu-training", "npu-troubleshooting")
CLAUDE_CODE_VERSION = "2.1.328"
CLAUDE_CACHE = cache_dir() / "claude-code"


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


def _installed_version(prefix: Path) -> str:
    meta = prefix / "node_modules" / "@anthropic-ai" / "claude-code" / "package.json"
    try:
        return json.loads(meta.read_text(encoding="utf-8")).get("version", "")
    except (OSError, ValueError):
        return ""


@pytest.fixture(scope="session")
def claude_cli(tmp_path_factory) -> "ClaudeCli":
    """The pinned claude CLI from npm, installed once into .test-cache/."""
    binary = CLAUDE_CACHE / "node_modules" / ".bin" / "claude"
    with cache_lock("claude-code"):
        if _installed_version(CLAUDE_CACHE) != CLAUDE_CODE_VERSION or not binary.exists():
            npm = shutil.which("npm")
            if npm is None:
                unavailable("npm is not installed; cannot install @anthropic-ai/claude-code")
            CLAUDE_CACHE.mkdir(parents=True, exist_ok=True)
            proc = subprocess.run(
                [npm, "install", "--prefix", str(CLAUDE_CACHE), "--no-audit", "--no-fund",
                 "--loglevel=error", f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}"],
                capture_output=True, text=True, timeout=600,
            )
            if proc.returncode != 0 or _installed_version(CLAUDE_CACHE) != CLAUDE_CODE_VERSION:
                unavailable(f"npm install of claude-code {CLAUDE_CODE_VERSION} failed:\n{proc.stderr[-2000:]}")
    return ClaudeCli(binary, tmp_path_factory.mktemp("claude-home"))


class ClaudeCli:
    def __init__(self, binary: Path, home: Path) -> None:
        self.binary = binary
        self.home = home

    def run(self, *args: str, timeout: int = 120) -> subprocess.CompletedProcess:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(self.home),
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CI": "true",
        }
        return subprocess.run(
            [str(self.binary), *args], capture_output=True, text=True, timeout=timeout, env=env
        )


@pytest.fixture(scope="session")
def agentskills() -> str:
    """The `agentskills` console script of skills-ref 0.1.1."""
    candidate = Path(sys.executable).parent / "agentskills"
    found = str(candidate) if candidate.exists() else shutil.which("agentskills")
    if not found:
        unavailable("agentskills (pip install skills-ref==0.1.1) is not installed")
    return found


@pytest.fixture(scope="session")
def generated_skill(tmp_path_factory) -> Path:
    """A model skill produced by the generator from small but complete inputs."""
    from ascend_migrate.skillgen import generate_model_skill

    base = tmp_path_factory.mktemp("generated")
    project = base / "project"
    project.mkdir()
    (project / "train.py").write_text(
        "import torch\nimport torch_scatter\nmodel = torch.nn.Linear(2, 2).cuda()\n", encoding="utf-8"
    )
    (project / "requirements.txt").write_text("torch\ntorch_scatter\n", encoding="utf-8")
    from ascend_migrate.validate import provenance

    original = base / "original"
    shutil.copytree(project, original)
    manifest = provenance.tree_manifest(project)
    data = {
        "schema": "ascend-migrate/validation-report/1",
        "verdict": "pass",
        "items": [{"id": "golden", "title": "golden outputs", "status": "pass", "severity": "error",
                   "detail": "cos 0.9999"}],
        "thresholds": {"cosine": 0.99, "max_abs_err": 0.001},
        "environment": {"python": "3.10.14", "torch": "2.1.0", "torch_npu": "2.1.0.post8", "cann": "8.0.RC3"},
        "provenance": {"device": "npu:0", "device_kind": "npu",
                       "host": {"python": "3.10.14", "torch": "2.1.0", "torch_npu": "2.1.0.post8", "cann": "8.0.RC3"},
                       "golden": {"given": True, "compared": True, "sha256": "0" * 64},
                       "tree": {"algorithm": provenance.TREE_HASH_ALGO, "sha256": provenance.manifest_hash(manifest),
                                "files": len(manifest), "excluded": [], "manifest": manifest}},
    }
    report = base / "report.json"
    report.write_text(json.dumps(provenance.sign(data)), encoding="utf-8")
    scan = base / "scan.json"
    scan.write_text(json.dumps({
        "findings": [{"rule": "CU101", "path": "train.py", "line": 3, "severity": "warning",
                      "message": ".cuda() moves the model", "symbol": "Module.cuda",
                      "fixes": [{"style": "transfer"}, {"style": "agnostic"}]}],
        "entry_points": [{"path": "train.py", "line": 1, "kind": "main-guard"}],
    }), encoding="utf-8")
    changes = base / "changes.json"
    changes.write_text(json.dumps({"style": "transfer", "changes": [
        {"file": "train.py", "start_line": 1, "end_line": 1, "rule": "EX001", "operation": "insert",
         "message": "import torch_npu first", "after": "import torch_npu"}]}), encoding="utf-8")
    path = generate_model_skill(
        project, "Demo-Net 1.0", report=report, scan=scan, changes=changes, out_root=base / "skills",
        original=original,
    )
    return path.parent
