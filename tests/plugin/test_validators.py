"""The real validators: `claude plugin validate --strict` (npm @anthropic-ai/claude-code,
pinned) and `agentskills validate` (PyPI skills-ref==0.1.1), on the shipped skills and on a
generated model skill. Under CI=true a validator that cannot be installed fails the run."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SKILLS = ("cuda-to-npu", "npu-training", "npu-troubleshooting")


def test_claude_cli_is_the_pinned_version(claude_cli):
    proc = claude_cli.run("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[0] == "2.1.328"


def test_claude_validate_plugin_strict(claude_cli):
    proc = claude_cli.run("plugin", "validate", str(REPO / ".claude-plugin" / "plugin.json"), "--strict", "--json")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["success"], proc.stdout
    assert report["manifest"]["type"] == "plugin"
    assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []
    assert sorted(report["provides"]["skills"]) == [f"ascend-migration:{s}" for s in SKILLS]


def test_claude_validate_marketplace_strict(claude_cli):
    proc = claude_cli.run("plugin", "validate", str(REPO), "--strict", "--json")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["success"], proc.stdout
    assert report["manifest"]["type"] == "marketplace"
    assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []


def _skills_dir_with(tmp_path: Path, skill: Path) -> Path:
    target = tmp_path / ".claude" / "skills"
    shutil.copytree(skill, target / skill.name)
    return target


def test_claude_validate_generated_skill_strict(claude_cli, generated_skill, tmp_path):
    skills = _skills_dir_with(tmp_path / "good", generated_skill)
    proc = claude_cli.run("plugin", "validate", str(skills), "--strict")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Validation passed" in proc.stdout
    # Control: the same check run on a broken copy fails, so the pass above means something.
    broken = _skills_dir_with(tmp_path / "bad", generated_skill)
    skill_md = broken / generated_skill.name / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace("name: ", "name: 'unterminated ", 1))
    proc = claude_cli.run("plugin", "validate", str(broken), "--strict")
    assert proc.returncode != 0 and "frontmatter" in proc.stdout


@pytest.mark.parametrize("name", SKILLS)
def test_agentskills_validate_shipped(agentskills, name):
    proc = subprocess.run([agentskills, "validate", str(REPO / "skills" / name)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Valid skill" in proc.stdout


def test_agentskills_validate_generated(agentskills, generated_skill, tmp_path):
    proc = subprocess.run([agentskills, "validate", str(generated_skill)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # Control: a copy in a folder whose name differs from `name` is rejected.
    renamed = tmp_path / "wrong-folder"
    shutil.copytree(generated_skill, renamed)
    proc = subprocess.run([agentskills, "validate", str(renamed)], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0


def test_claude_validate_directory_profile_strict(claude_cli):
    """The plugin directory's own checks (icon, README, metadata) pass with warnings as errors."""
    proc = claude_cli.run("plugin", "validate", str(REPO), "--strict", "--profile", "directory")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Validation passed" in proc.stdout


def test_icon_is_what_the_script_draws(tmp_path):
    """The committed icon is reproducible from scripts/make_icon.py, and is a square PNG in range."""
    import struct
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "make_icon.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    data = (REPO / ".claude-plugin" / "icon.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width == height and 512 <= width <= 2048
