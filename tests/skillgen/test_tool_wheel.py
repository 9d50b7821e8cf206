"""The wheel of ascend-migrate stored in every model skill: built from the installed files with
our own zip writer, installable by pip (the recipe test installs it), and the same bytes every time."""
from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import io
import zipfile

from ascend_migrate import __version__
from ascend_migrate.skillgen.wheel import build_tool_wheel, runtime_requirements


def _members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def test_the_wheel_is_deterministic_and_named_for_its_version():
    name, first = build_tool_wheel()
    again = build_tool_wheel()
    assert name == f"ascend_migrate-{__version__}-py3-none-any.whl"
    assert again == (name, first)
    with zipfile.ZipFile(io.BytesIO(first)) as zf:
        assert {info.date_time for info in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_record_lists_every_member_with_its_sha256():
    _, data = build_tool_wheel()
    members = _members(data)
    info = f"ascend_migrate-{__version__}.dist-info"
    rows = [line.split(",") for line in members[f"{info}/RECORD"].decode().splitlines()]
    listed = {path: (digest, size) for path, digest, size in rows}
    assert set(listed) == set(members)
    assert listed[f"{info}/RECORD"] == ("", "")
    for path, body in members.items():
        if path.endswith("RECORD"):
            continue
        digest = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
        assert listed[path] == (f"sha256={digest}", str(len(body))), path


def test_metadata_carries_the_runtime_requirements_and_the_console_script():
    _, data = build_tool_wheel()
    members = _members(data)
    info = f"ascend_migrate-{__version__}.dist-info"
    metadata = members[f"{info}/METADATA"].decode()
    requires = [line.split(": ", 1)[1] for line in metadata.splitlines() if line.startswith("Requires-Dist: ")]
    assert requires == runtime_requirements(importlib.metadata.distribution("ascend-migrate"))
    assert {r.split(">")[0].split(";")[0] for r in requires} >= {"pyyaml", "jinja2", "click", "markdown-it-py"}
    assert not any("extra ==" in r for r in requires)  # test tools are not runtime dependencies
    # the console script the installed distribution declares (pyproject's, as of its install)
    declared = sorted(f"{e.name} = {e.value}" for e in importlib.metadata.distribution("ascend-migrate").entry_points
                      if e.group == "console_scripts")
    assert declared and declared == members[f"{info}/entry_points.txt"].decode().splitlines()[1:]
    assert "Root-Is-Purelib: true" in members[f"{info}/WHEEL"].decode()
    # the package data the tool reads at run time, and no byte-code
    names = set(members)
    assert "ascend_migrate/skillgen/templates/model-skill/SKILL.md.j2" in names
    assert "ascend_migrate/knowledge/precision_switches.yaml" in names
    assert not any(n.endswith(".pyc") or "__pycache__" in n for n in names)
