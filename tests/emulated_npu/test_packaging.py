"""The wheel and the sdist carry the emulated npu's source, and its torch_npu stays inside
ascend_migrate (never a top-level package of the installed wheel)."""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "src" / "ascend_migrate" / "emulated_npu"
# one interpreter per build: setuptools carries a command's options over to the next one it runs
BUILD = "import sys; from setuptools import build_meta as b; print(getattr(b, sys.argv[1])(sys.argv[2]))"


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> dict:
    setuptools = pytest.importorskip("setuptools")
    release = tuple(int(x) for x in setuptools.__version__.split(".")[:2] if x.isdigit())
    if release < (70, 1) and importlib.util.find_spec("wheel") is None:
        pytest.skip(f"setuptools {setuptools.__version__} builds wheels only with the `wheel` package, "
                    "which this environment does not have")
    tree = tmp_path_factory.mktemp("tree")  # a copy: building in the checkout would leave build/ behind
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, tree / name)
    shutil.copytree(REPO / "src" / "ascend_migrate", tree / "src" / "ascend_migrate",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tree / "dist"
    for hook in ("build_wheel", "build_sdist"):
        ran = subprocess.run([sys.executable, "-c", BUILD, hook, str(out)], cwd=tree, capture_output=True, text=True,
                             timeout=600)
        assert ran.returncode == 0, ran.stderr[-3000:]
    wheel = next(out.glob("*.whl"))
    sdist = next(out.glob("*.tar.gz"))
    with zipfile.ZipFile(wheel) as zf:
        wheel_names = zf.namelist()
        top_level = next((zf.read(n).decode().split() for n in wheel_names if n.endswith(".dist-info/top_level.txt")), None)
    with tarfile.open(sdist) as tf:
        sdist_names = [n.split("/", 1)[1] for n in tf.getnames() if "/" in n]
    return {"wheel": wheel_names, "top_level": top_level, "sdist": sdist_names}


def _shipped() -> list[str]:
    files = [*PACKAGE.glob("csrc/*.cpp"), *PACKAGE.glob("site/**/*.py"), PACKAGE / "README.md",
             *PACKAGE.glob("*.py")]
    return sorted(p.relative_to(REPO / "src").as_posix() for p in files)


def test_the_wheel_carries_the_source_and_the_site_package(dists):
    shipped = _shipped()
    assert "ascend_migrate/emulated_npu/csrc/npu_device.cpp" in shipped
    assert "ascend_migrate/emulated_npu/site/torch_npu/contrib/transfer_to_npu.py" in shipped
    missing = [name for name in shipped if name not in dists["wheel"]]
    assert not missing, missing


def test_torch_npu_is_no_top_level_package_of_the_wheel(dists):
    assert not [n for n in dists["wheel"] if n.split("/", 1)[0] in ("torch_npu", "site", "csrc")]
    if dists["top_level"] is not None:
        assert dists["top_level"] == ["ascend_migrate"]


def test_the_sdist_carries_the_source_too(dists):
    missing = [name for name in _shipped() if f"src/{name}" not in dists["sdist"]]
    assert not missing, missing
