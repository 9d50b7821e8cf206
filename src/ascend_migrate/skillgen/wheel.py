"""A wheel of the running ascend-migrate, stored with a model skill.

A model skill must work on a host that has nothing but the skill folder and the package
registries; the tool that replays and validates the port is not on every index. So the
generator writes the package it runs from into the skill as a pure-Python wheel, built here from
the installed files with the standard library's zip writer: no setuptools, pip or source checkout
is needed at generation time.

The bytes are deterministic (sorted members, fixed timestamps and permissions), so generating
the same skill twice gives the same wheel. Requires-Dist comes from the installed distribution's
metadata (importlib.metadata), without the optional extras.
"""
from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import io
import re
import zipfile
from pathlib import Path
from typing import Iterable, Optional

from ascend_migrate.skillgen.errors import SkillGenError

DIST_NAME = "ascend-migrate"
IMPORT_NAME = "ascend_migrate"
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest a zip can hold: no build time in the bytes
_SKIP_DIRS = {"__pycache__"}
_SKIP_SUFFIXES = (".pyc", ".pyo", ".tmp")


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return f"sha256={digest}"


def package_files(package_dir: Path) -> list[tuple[str, Path]]:
    """(archive path, file) for every file of the package, without caches; sorted."""
    out = []
    for path in sorted(package_dir.rglob("*")):
        rel = path.relative_to(package_dir)
        if any(part in _SKIP_DIRS or part.startswith(".") for part in rel.parts):
            continue
        if path.is_file() and not path.is_symlink() and not path.name.endswith(_SKIP_SUFFIXES):
            out.append((f"{IMPORT_NAME}/{rel.as_posix()}", path))
    return out


def runtime_requirements(dist: Optional[importlib.metadata.Distribution]) -> list[str]:
    """The installed distribution's Requires-Dist without the ones that belong to an extra."""
    if dist is None:
        return []
    return [r for r in (dist.requires or []) if not re.search(r"\bextra\s*==", r)]


def _metadata(version: str, requires: Iterable[str], summary: str, python: str) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {DIST_NAME}", f"Version: {version}"]
    if summary:
        lines.append(f"Summary: {summary}")
    if python:
        lines.append(f"Requires-Python: {python}")
    lines += [f"Requires-Dist: {r}" for r in requires]
    return "\n".join(lines) + "\n"


def _entry_points(dist: Optional[importlib.metadata.Distribution]) -> str:
    scripts = sorted((e.name, e.value) for e in (dist.entry_points if dist else []) if e.group == "console_scripts")
    if not scripts:
        scripts = [("ascend-migrate", "ascend_migrate.entry:main")]
    return "[console_scripts]\n" + "".join(f"{name} = {value}\n" for name, value in scripts)


def _add(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    zf.writestr(info, data)


def wheel_name(version: str) -> str:
    return f"{IMPORT_NAME}-{version}-py3-none-any.whl"


def build_tool_wheel(package_dir: Optional[Path] = None, version: Optional[str] = None) -> tuple[str, bytes]:
    """Return (file name, bytes) of a wheel of the ascend-migrate package that is running."""
    from ascend_migrate import __version__

    package_dir = package_dir or Path(__file__).resolve().parents[1]
    version = version or __version__
    try:
        dist: Optional[importlib.metadata.Distribution] = importlib.metadata.distribution(DIST_NAME)
    except importlib.metadata.PackageNotFoundError:
        dist = None
    requires = runtime_requirements(dist)
    if not requires:
        raise SkillGenError("cannot store the tool with the skill: the installed ascend-migrate has no package "
                            "metadata (run it from an installed package: `pip install ascend-migrate`)")
    summary = (dist.metadata.get("Summary") or "") if dist else ""
    python = (dist.metadata.get("Requires-Python") or "") if dist else ""
    info_dir = f"{IMPORT_NAME}-{version}.dist-info"
    members: list[tuple[str, bytes]] = [(arc, path.read_bytes()) for arc, path in package_files(package_dir)]
    members += [
        (f"{info_dir}/METADATA", _metadata(version, requires, summary, python).encode("utf-8")),
        (f"{info_dir}/WHEEL", (f"Wheel-Version: 1.0\nGenerator: ascend-migrate {version}\n"
                               "Root-Is-Purelib: true\nTag: py3-none-any\n").encode("utf-8")),
        (f"{info_dir}/entry_points.txt", _entry_points(dist).encode("utf-8")),
    ]
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data in members)
    record += f"{info_dir}/RECORD,,\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in members:
            _add(zf, name, data)
        _add(zf, f"{info_dir}/RECORD", record.encode("utf-8"))
    return wheel_name(version), buffer.getvalue()
