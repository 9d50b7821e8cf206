"""Text from a scanned tree or a log never reaches a terminal or a text report as control
characters: escape sequences (CSI colours, OSC titles and OSC 52 clipboard writes), bells,
carriage returns and line breaks in names are shown escaped, so a file can neither drive the
terminal nor forge report lines."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import run_cli

OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # writes "echo pwned" to the clipboard
CSI = "\x1b[2J\x1b[31m"
FORGED = "\n  forged.py:1:1  XX999  error  nothing to see"
RAW = ("\x1b", "\x07", "\x9b", "\r")


def _clean(text: str) -> None:
    for ch in RAW:
        assert ch not in text, (ch, text[:2000])
    assert "\n  forged.py" not in text


def test_printable_escapes_every_control_character() -> None:
    from ascend_migrate.printable import printable

    for code in [*range(0x00, 0x20), 0x7f, *range(0x80, 0xa0)]:
        shown = printable(f"a{chr(code)}b")
        assert shown.isprintable() and shown.startswith("a") and shown.endswith("b"), (code, shown)
    assert printable("x\x1b[31my") == "x\\x1b[31my"
    assert printable("a\nb") == "a\\nb" and printable("a\nb", keep="\n") == "a\nb"
    assert printable("bidi \u202e txt") == "bidi \\u202e txt"
    assert printable("caf\udcc3") == "caf\\xc3"  # an undecodable byte of a name, as before
    assert printable("plain text: 中文, é") == "plain text: 中文, é"


@pytest.fixture
def hostile_tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    (root / f"run{OSC52}{FORGED}.sh").write_text("export CUDA_VISIBLE_DEVICES=0\n")
    (root / "launch.sh").write_text(f"python train.py --backend nccl-{CSI}{OSC52}x\n"
                                    f"export CUDA_VISIBLE_DEVICES=0  # {CSI}{OSC52}\n")
    (root / f"m{CSI}.py").write_text("import torch\nx = torch.zeros(1).cuda()\n")
    (root / f"bad{OSC52}.py").write_text("def (:\n")
    return root


@pytest.mark.parametrize("fmt", ["text", "md"])
def test_scan_reports_escape_names_and_contents(hostile_tree: Path, fmt: str) -> None:
    proc = run_cli("scan", str(hostile_tree), "--no-cache", "--format", fmt, "--no-color")
    assert proc.returncode in (0, 1), proc.stderr
    _clean(proc.stdout)
    _clean(proc.stderr)
    assert "\\x1b]52;c;" in proc.stdout  # shown, not dropped: the user sees what the name holds


def test_migrate_messages_escape_file_names(hostile_tree: Path) -> None:
    proc = run_cli("migrate", str(hostile_tree), "-v")
    _clean(proc.stderr)
    assert "\n  forged.py" not in proc.stdout  # names in the diff's headers are escaped
    assert f"# {OSC52}" in proc.stdout  # the diff's lines through a pipe: byte for byte


def test_migrate_diff_on_a_terminal_is_escaped(hostile_tree: Path) -> None:
    import os
    import pty
    import subprocess
    import sys

    from .conftest import ROOT

    controller, terminal = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "ascend_migrate", "migrate", str(hostile_tree)],
                            stdout=terminal, stderr=subprocess.DEVNULL, env=env)
    os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(controller)
    shown = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    assert "+++ b/launch.sh" in shown and "# \\x1b[2J" in shown, shown
    _clean(shown)


def test_diagnose_escapes_osc_sequences(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text(f"step 1\nRuntimeError: EH9999: init env failed {OSC52} {CSI}\x07 x\n")
    proc = run_cli("diagnose", str(log), "--no-color")
    assert "EH9999" in proc.stdout, proc.stdout
    _clean(proc.stdout)


def test_replay_escapes_the_recorded_command(tmp_path: Path, project: Path) -> None:
    skill = tmp_path / "skill"
    (skill / "files").mkdir(parents=True)
    (skill / "manual.patch").write_text("")
    record = {
        "schema": "ascend-migrate/replay/1", "model": "m",
        "migrate": {"options": {"style": "transfer"}, "command": f"ascend-migrate migrate . {OSC52}{FORGED}"},
        "manual_patch": {"file": "manual.patch", "files": [], "binary_files": [], "deleted_binary": []},
        "tree": {"sha256": "0" * 64, "excluded": [], "manifest": {}},
        "entry": {},
    }
    (skill / "replay.json").write_text(json.dumps(record))
    proc = run_cli("replay", str(skill), str(project))
    assert "1/4 migrate: ascend-migrate migrate ." in proc.stderr, proc.stderr
    _clean(proc.stderr)
    _clean(proc.stdout)
