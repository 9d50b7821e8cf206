"""The scripts a skill or a user runs declare what they need where tools read it (PEP 723), and
say what is missing instead of failing with a traceback."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p for p in (REPO / "scripts").glob("*.py") if not p.name.startswith("_"))
sys.path.insert(0, str(REPO / "scripts"))
from _bootstrap import declared_dependencies, missing_dependencies  # noqa: E402

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# The reference regular expression of the inline script metadata specification.
PEP723 = re.compile(r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$")


def _metadata(script: Path) -> dict:
    blocks = [m for m in PEP723.finditer(script.read_text(encoding="utf-8")) if m.group("type") == "script"]
    assert len(blocks) == 1, f"{script.name}: expected one `# /// script` block"
    content = "".join(line[2:] if line.startswith("# ") else line[1:]
                      for line in blocks[0].group("content").splitlines(keepends=True))
    return tomllib.loads(content)


def _norm(requirement: str) -> str:
    return re.sub(r"\s+", "", requirement).replace("'", '"').lower()


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_inline_metadata_matches_the_package(script):
    meta = _metadata(script)
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert meta["requires-python"] == project["requires-python"]
    if script.name == "make_icon.py":  # standard library only
        assert meta["dependencies"] == []
        return
    assert sorted(map(_norm, meta["dependencies"])) == sorted(map(_norm, project["dependencies"]))
    # the start-up reads the same list the specification's parser does
    assert declared_dependencies(str(script)) == meta["dependencies"]


def test_missing_dependencies_follow_markers():
    assert missing_dependencies(["surely-not-installed-pkg>=1"]) == ["surely-not-installed-pkg>=1"]
    assert missing_dependencies(["surely-not-installed-pkg; python_version < '3.0'"]) == []
    assert missing_dependencies(["click>=8.0"]) == []


def test_script_without_its_packages_names_them(tmp_path):
    """A Python with nothing installed: one message, the install command, exit code 2."""
    bare = tmp_path / "bare"
    venv.EnvBuilder(with_pip=False).create(bare)
    for script in ("scan_cuda_apis.py", "check_npu_basics.py"):
        proc = subprocess.run([str(bare / "bin" / "python"), str(REPO / "scripts" / script), "--help"],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        assert "missing Python packages: pyyaml>=5.4, jinja2>=3.0, click>=8.0, markdown-it-py>=2.0" in proc.stderr
        assert "python3 -m venv" in proc.stderr and "-m pip install 'pyyaml>=5.4'" in proc.stderr


UV_VERSION = "0.13.9"


def test_uv_runs_a_script_from_its_metadata_alone(tmp_path):
    """`uv run` builds the script's environment from the inline block, with nothing installed."""
    import os

    from ci_gates import cache_dir, cache_lock, unavailable

    tools = cache_dir() / f"uv-{UV_VERSION}"
    uv = tools / "bin" / "uv"
    with cache_lock(f"uv-{UV_VERSION}"):
        if not uv.exists():
            venv.EnvBuilder(with_pip=True).create(tools)
            proc = subprocess.run([str(tools / "bin" / "python"), "-m", "pip", "install", "-q", f"uv=={UV_VERSION}"],
                                  capture_output=True, text=True, timeout=600)
            if proc.returncode != 0 or not uv.exists():
                unavailable(f"cannot install uv {UV_VERSION}: {proc.stderr[-1000:]}")
    sample = tmp_path / "sample"
    sample.mkdir()
    (sample / "train.py").write_text("import torch\nx = torch.zeros(2).cuda()\n")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "UV_CACHE_DIR": str(cache_dir() / "uv-cache"),
           "NO_COLOR": "1", "UV_SYSTEM_CERTS": "1"}  # the machine's certificate store, as pip uses
    proc = subprocess.run([str(uv), "run", "--no-project", str(REPO / "scripts" / "scan_cuda_apis.py"), str(sample),
                           "--format", "json", "--no-cache"], capture_output=True, text=True, timeout=600,
                          cwd=tmp_path, env=env)
    if proc.returncode not in (0, 1) and "Failed to fetch" in proc.stderr:
        unavailable(f"uv could not reach the package index: {proc.stderr[-1000:]}")
    assert proc.returncode in (0, 1), proc.stderr
    assert any(f["path"].endswith("train.py") for f in json.loads(proc.stdout)["findings"])
