"""The toolkit wheel each shipped skill carries is the package as it is in `src/`.

A skill copied alone installs the tool from `skills/<skill>/tools/`; a stale wheel would give an
agent an older scanner than the one the skill describes. `make references` (`ascend-migrate
docs --write`) rebuilds it with the model-skill generator's deterministic wheel writer.
"""
from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path

import pytest

from ascend_migrate import __version__

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the oldest-Python pass
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
SKILLS = ("cuda-to-npu", "npu-training", "npu-troubleshooting")
WHEEL = f"ascend_migrate-{__version__}-py3-none-any.whl"
PACKAGE_SUFFIXES = (".py", ".yaml", ".json", ".j2", ".sh", ".cpp")  # pyproject's package data + modules
PACKAGE_EXTRA = ("ascend_migrate/emulated_npu/README.md",)  # package data named one by one
REBUILD = "stale: run `make references` (ascend-migrate docs --write) and commit skills/*/tools/"


def _package_files() -> dict[str, bytes]:
    root = REPO / "src"
    return {path.relative_to(root).as_posix(): path.read_bytes()
            for path in sorted((root / "ascend_migrate").rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts
            and (path.suffix in PACKAGE_SUFFIXES or path.relative_to(root).as_posix() in PACKAGE_EXTRA)}


def _normalise(requirement: str) -> str:
    return re.sub(r"\s+", "", requirement).replace("'", '"').lower()


@pytest.fixture(scope="module")
def package_files() -> dict[str, bytes]:
    return _package_files()


@pytest.mark.parametrize("name", SKILLS)
def test_wheel_holds_the_current_package(name, package_files):
    wheel = REPO / "skills" / name / "tools" / WHEEL
    assert wheel.is_file(), f"{wheel} missing: {REBUILD}"
    with zipfile.ZipFile(wheel) as archive:
        members = {info.filename: info for info in archive.infolist()}
        packaged = {n: archive.read(n) for n in members if n.startswith("ascend_migrate/")}
        metadata = archive.read(f"ascend_migrate-{__version__}.dist-info/METADATA").decode()
        entry_points = archive.read(f"ascend_migrate-{__version__}.dist-info/entry_points.txt").decode()
    differing = sorted(n for n in package_files.keys() | packaged.keys()
                       if package_files.get(n) != packaged.get(n))
    assert not differing, f"{REBUILD}; differs: {differing[:10]}"
    assert f"Version: {__version__}\n" in metadata
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    required = [line.split(":", 1)[1].strip() for line in metadata.splitlines()
                if line.startswith("Requires-Dist:") and "extra ==" not in line]
    assert sorted(map(_normalise, required)) == sorted(map(_normalise, project["dependencies"])), REBUILD
    # the script runs one of the package's two entry points (the installed metadata's choice)
    scripts = entry_points.splitlines()[1:]
    assert len(scripts) == 1 and scripts[0] in ("ascend-migrate = ascend_migrate.entry:main",
                                                 "ascend-migrate = ascend_migrate.cli:main"), scripts


def test_wheels_are_what_docs_write_builds():
    from ascend_migrate.knowledge.docs import skill_tool_wheels

    for target, data in skill_tool_wheels(REPO).items():
        assert (REPO / target).read_bytes() == data, f"{target}: {REBUILD}"


def test_every_skill_carries_the_same_wheel():
    blobs = {(REPO / "skills" / name / "tools" / WHEEL).read_bytes() for name in SKILLS}
    assert len(blobs) == 1


def test_tools_folders_hold_only_the_wheel():
    for name in SKILLS:
        assert sorted(p.name for p in (REPO / "skills" / name / "tools").iterdir()) == [WHEEL]
