"""`kb sync`, `kb show` and `kb versions` print text a wheel wrote: escaped, never raw.

A crafted wheel's version, its METADATA `Version:` and the package names and versions of its
apis_config.json reached the terminal as they were, so an OSC 52 sequence in them wrote the
clipboard and a CSI one cleared the screen. A version that is not a release version is now
refused at sync time, and every line these commands print passes through `printable`.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli

WHEEL_KIT = Path(__file__).resolve().parents[1] / "kbsync"
OSC = "\x1b]52;c;ZWNobyBoaQ==\x07"
CSI = "\x1b[2J"
C1 = "\x9b31m"


@pytest.fixture
def kit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.syspath_prepend(str(WHEEL_KIT))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    import kbsync_wheelkit

    return kbsync_wheelkit


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def _raw(text: str) -> bool:
    return any(ch in text for ch in "\x1b\x07\x9b")


def test_a_version_with_escapes_is_refused_and_shown_escaped(kit, tmp_path: Path) -> None:
    files = kit.modern_files("9.9.0")
    files["torch_npu/version.py"] = f"__version__ = '9.9.0{OSC}'\n"
    wheel = kit.write_wheel(tmp_path, files)
    result = _run("kb", "sync", "--wheel", str(wheel))
    assert result.exit_code == 2, result.output
    assert not _raw(result.output) and "\\x1b]52" in result.output, repr(result.output)
    assert not (tmp_path / "data").exists()


def test_metadata_version_and_third_party_names_print_escaped(kit, tmp_path: Path) -> None:
    files = kit.modern_files("9.9.8")
    meta = "torch_npu-9.9.8.dist-info/METADATA"
    files[meta] = files[meta].replace("Version: 9.9.8", f"Version: 9.9.8{CSI}")
    config = json.loads(files["torch_npu/contrib/apis_config.json"])
    config[f"evil{OSC}"] = {"version": f"1.0{C1}", "apis": {"evil.f": "function"}}
    files["torch_npu/contrib/apis_config.json"] = json.dumps(config)
    wheel = kit.write_wheel(tmp_path, files, name="torch_npu-9.9.8-py3-none-any.whl")

    synced = _run("kb", "sync", "--wheel", str(wheel))
    assert synced.exit_code == 0, synced.output
    assert not _raw(synced.output) and "\\x1b[2J" in synced.output, repr(synced.output)

    shown = _run("kb", "show", "9.9.8")
    assert shown.exit_code == 0, shown.output
    assert not _raw(shown.output) and "evil\\x1b]52" in shown.output and "1.0\\x9b31m" in shown.output, \
        repr(shown.output)
    listed = _run("kb", "versions")
    assert listed.exit_code == 0 and not _raw(listed.output), repr(listed.output)


def test_a_synced_file_written_by_hand_prints_escaped(kit, tmp_path: Path) -> None:
    """The user's folder may hold a file another tool (or an older version) wrote."""
    wheel = kit.write_wheel(tmp_path, kit.modern_files("9.9.9"), name="torch_npu-9.9.9-py3-none-any.whl")
    assert _run("kb", "sync", "--wheel", str(wheel)).exit_code == 0
    path = tmp_path / "data" / "ascend-migrate" / "coverage" / "torch_npu-9.9.9.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["source"]["filename"] = f"torch_npu{OSC}.whl"
    doc["missing"]["x"] = f"reason {CSI}"
    path.write_text(json.dumps(doc), encoding="utf-8")
    for args in (("kb", "versions"), ("kb", "show", "9.9.9")):
        result = _run(*args)
        assert result.exit_code == 0 and not _raw(result.output) and "\\x1b" in result.output, (args, result.output)
