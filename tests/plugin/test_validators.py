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


def _checkout_copy(target: Path) -> None:
    """The files git tracks, as they are in the working tree (symlinks kept as links)."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, timeout=60)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: cannot tell the committed tree")
    for rel in filter(None, listed.stdout.decode().split("\0")):
        source, dest = REPO / rel, target / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(source), dest)
        elif source.is_file():
            shutil.copy2(source, dest)


def test_marketplace_add_and_install(claude_cli, tmp_path):
    """Journey 8 offline: add a used checkout as a marketplace, install the plugin from it.

    A checkout after the README's commands holds virtualenvs and test caches (gigabytes);
    the install copies the plugin's parts only, as files, and the copy runs on its own.
    """
    checkout = tmp_path / "checkout"
    _checkout_copy(checkout)
    for junk in (".venv/lib/big.bin", ".test-cache/wheels/big.whl", "ported/model.py", "build/lib/x.py"):
        (checkout / junk).parent.mkdir(parents=True, exist_ok=True)
        (checkout / junk).write_bytes(b"\0" * (4 << 20))
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())["name"]
    proc = claude_cli.run("plugin", "marketplace", "add", str(checkout))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = claude_cli.run("plugin", "install", f"ascend-migration@{market}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = claude_cli.run("plugin", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    installed = {entry["id"]: entry for entry in json.loads(proc.stdout)}
    entry = installed[f"ascend-migration@{market}"]
    assert entry["enabled"] is True
    assert entry["version"] == json.loads((REPO / "plugin.json").read_text())["version"]
    copied = Path(entry["installPath"])
    try:
        top = {p.name for p in copied.iterdir()}
        assert top == {".claude-plugin", "LICENSE", "README.md", "pyproject.toml", "skills", "scripts",
                       "references", "templates", "src"}, top
        files = [p for p in copied.rglob("*")]
        assert not any(p.is_symlink() for p in files), "links must arrive as files"
        size = sum(p.stat().st_size for p in files if p.is_file())
        assert size < 8 << 20, f"installed copy is {size} bytes"
        assert sorted(p.parent.name for p in copied.glob("skills/*/SKILL.md")) == sorted(SKILLS)
        # The copy works alone: a script scans a CUDA file with the package inside the copy.
        sample = tmp_path / "sample" / "train.py"
        sample.parent.mkdir()
        sample.write_text("import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n")
        run = subprocess.run([sys.executable, str(copied / "scripts" / "scan_cuda_apis.py"), str(sample.parent),
                              "--format", "json", "--no-cache"],
                             capture_output=True, text=True, timeout=120, cwd=tmp_path,
                             env={**os.environ, "PYTHONPATH": ""})
        assert run.returncode in (0, 1), run.stderr
        assert any(f["path"].endswith("train.py") for f in json.loads(run.stdout)["findings"])
    finally:
        claude_cli.run("plugin", "uninstall", f"ascend-migration@{market}")
        claude_cli.run("plugin", "marketplace", "remove", market)


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
