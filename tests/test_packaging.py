"""Packaging: what the source imports on each supported Python is declared as a dependency."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised by the oldest-Python run
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]


def _fallback_imports() -> set[str]:
    """Modules imported only on older Pythons: the `else` of a `sys.version_info` test, or an
    `except ImportError` branch."""
    found: set[str] = set()

    def collect(stmts) -> None:
        for stmt in stmts:
            for sub in ast.walk(stmt):
                if isinstance(sub, ast.Import):
                    found.update(alias.name.split(".")[0] for alias in sub.names)

    for path in (REPO / "src").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.If) and "version_info" in ast.dump(node.test):
                collect(node.orelse)
            elif isinstance(node, ast.Try):
                for handler in node.handlers:
                    collect(handler.body)
    return found


def test_older_python_fallbacks_are_declared():
    meta = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    declared = {dep.split(";")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower()
                for dep in meta["project"]["dependencies"]}
    stdlib = set(getattr(sys, "stdlib_module_names", ())) | {"sre_parse", "sre_constants"}
    fallbacks = _fallback_imports() - {"torch", "torch_npu"} - stdlib  # extras are probed at run time
    assert "tomli" in fallbacks  # the case that broke Python 3.9/3.10 users
    assert fallbacks <= declared, f"imported on older Pythons but not declared: {fallbacks - declared}"


def test_demo_installs_the_core_only(tmp_path):
    """`make demo` must not pull the test extras (torch is gigabytes where no local wheel exists)."""
    import shutil
    import subprocess
    make = shutil.which("make")
    if make is None:
        import pytest
        pytest.skip("make is not installed")
    proc = subprocess.run([make, "-n", "-C", str(REPO), "demo", f"VENV={tmp_path / 'venv'}"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    installs = [line for line in proc.stdout.splitlines() if "pip install" in line]
    assert any(line.rstrip().endswith("-e .") for line in installs), proc.stdout
    assert not any("[test]" in line or "torch" in line for line in installs), installs
