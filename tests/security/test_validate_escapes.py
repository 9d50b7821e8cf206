"""`validate capture` and `validate compare` print what the project's code raised and wrote
escaped: an exception text, an exit message or an output line holding an OSC 52 or CSI
sequence reached the terminal raw (`error: running ... raised RuntimeError: boom \\e]52;...`)."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli

OSC52 = "\\x1b]52;c;cHduZWQ=\\x07"  # as Python source: the file's string holds the real bytes
CSI = "\\x1b[2J"
RAW = ("\x1b", "\x07", "\x9b")

pytestmark = pytest.mark.needs_torch  # the project under validation imports torch

TRAIN = f'''import torch

def validation_entry():
    raise RuntimeError("boom {OSC52}{CSI} end")

if __name__ == "__main__":
    print("\\x1b]0;title from the project\\x07 step 1 loss 0.5", flush=True)
    raise SystemExit("fatal {OSC52}")
'''


def _clean(text: str) -> None:
    for ch in RAW:
        assert ch not in text, (ch, text[-2000:])


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "train.py").write_text(TRAIN, encoding="utf-8")
    return root


def test_capture_of_an_entry_escapes_the_exception(tmp_path: Path) -> None:
    root = _project(tmp_path)
    result = CliRunner().invoke(cli, ["validate", "capture", "train.py:validation_entry", "--root",
                                                      str(root), "-o", str(tmp_path / "golden.npz")])
    assert result.exit_code != 0
    # `output` holds stdout and stderr on every click version (older ones cannot split them)
    assert "RuntimeError: boom \\x1b]52;c;" in result.output, result.output
    _clean(result.output)


def test_capture_of_a_command_escapes_its_output_and_exit_message(tmp_path: Path) -> None:
    root = _project(tmp_path)
    result = CliRunner().invoke(cli, ["validate", "capture", "--root", str(root), "-o",
                                                      str(tmp_path / "golden.npz"), "--", "python", "train.py"])
    assert result.exit_code != 0
    assert "step 1 loss 0.5" in result.output and "fatal" in result.output, result.output
    _clean(result.output)
