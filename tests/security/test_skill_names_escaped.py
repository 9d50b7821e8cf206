"""`ascend-migrate skill` shows and writes the ported tree's file names escaped.

The skill folder stores a copy of every binary file the port changed under `files/<its name>`,
and SKILL.md lists the files of manual.patch. A name holding an escape sequence (OSC 52 writes
the terminal's clipboard, CSI 2J clears the screen) went raw into the `wrote ...` lines on the
terminal and raw into SKILL.md, where an agent or a viewer reads it. Both show it as visible
escapes now; the files themselves keep their real names.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from ascend_migrate.skillgen.cli import skill_command
from ascend_migrate.validate import provenance

CLIPBOARD = "w\x1b]52;c;cGF5bG9hZA==\x07"
CLEAR = "c\x1b[2J\x1b[H"


def _inputs(base: Path) -> list[str]:
    project, original = base / "project", base / "original"
    project.mkdir()
    (project / "train.py").write_text("import torch\n\nmodel = torch.nn.Linear(2, 2)\n")
    shutil.copytree(project, original)
    # the manual work of the port: one text file and one binary file with hostile names
    (project / f"{CLIPBOARD}.py").write_text("VALUE = 1\n")
    (project / f"{CLEAR}.bin").write_bytes(b"\0\1\2")
    manifest = provenance.tree_manifest(project)
    report = {
        "schema": "ascend-migrate/validation-report/1", "verdict": "pass",
        "items": [{"id": "golden-compare", "title": "golden outputs", "status": "pass", "severity": "error"}],
        "thresholds": {}, "environment": {"python": "3.10.14", "torch": "2.1.0"},
        "provenance": {"device": "npu:0", "device_kind": "npu", "host": {},
                       "golden": {"given": True, "compared": True, "sha256": "0" * 64, "kind": "model", "seed": 0},
                       "tree": {"algorithm": provenance.TREE_HASH_ALGO, "sha256": provenance.manifest_hash(manifest),
                                "files": len(manifest), "excluded": [], "manifest": manifest}},
    }
    provenance.sign(report)
    (base / "report.json").write_text(json.dumps(report))
    (base / "scan.json").write_text(json.dumps({"root": "project", "findings": [], "entry_points": []}))
    (base / "changes.json").write_text(json.dumps({"style": "transfer", "changes": []}))
    return [str(project), "--model", "m", "--out-root", str(base / "skills"), "--report", str(base / "report.json"),
            "--scan", str(base / "scan.json"), "--changes", str(base / "changes.json"), "--original", str(original)]


def test_skill_output_and_skill_md_escape_file_names(tmp_path: Path) -> None:
    result = CliRunner().invoke(skill_command, _inputs(tmp_path), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "files/c\\x1b[2J\\x1b[H.bin" in result.output  # named, visibly
    skill = tmp_path / "skills" / "m"
    text = (skill / "SKILL.md").read_text(encoding="utf-8")
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b]52;c;cGF5bG9hZA==\\x07.py" in text  # the patch's file list, escaped
    assert (skill / "files" / f"{CLEAR}.bin").read_bytes() == b"\0\1\2"  # the stored copy keeps its name
    for extra in skill.rglob("*.md"):
        assert "\x1b" not in extra.read_text(encoding="utf-8"), extra
