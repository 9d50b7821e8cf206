"""`env`: hostile script names and --python never run code; --rc-file edits are atomic and lossless."""
from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.envsetup.cli import env_command

from .conftest import ROOT, run_cli

CANN = ROOT / "tests" / "fixtures" / "check" / "cann" / "cann_8.0.RC3" / "Ascend"


def _env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith("ASCEND_")}


@pytest.mark.parametrize("name", ["npu$(touch PWNED).sh", "npu`touch PWNED`.sh", 'npu"; touch PWNED; ".sh',
                                  "npu'$(touch PWNED)'.sh"])
def test_script_name_with_shell_syntax_runs_nothing(tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    proc = run_cli("env", "--cann-root", str(CANN), "-o", str(out), env=_env(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert subprocess.run(["bash", "-n", str(out)]).returncode == 0  # still a well-formed script
    ran = subprocess.run(["bash", str(out)], cwd=tmp_path, capture_output=True, text=True, env=_env(), timeout=60)
    assert not (tmp_path / "PWNED").exists()
    assert name in ran.stderr  # the name is still printed, literally


def test_python_option_with_shell_syntax_runs_nothing(tmp_path: Path) -> None:
    out = tmp_path / "npu_env.sh"
    python = 'python3"; touch PWNED; "$(touch PWNED2)'
    proc = run_cli("env", "--cann-root", str(CANN), "-o", str(out), "--python", python, env=_env(), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    subprocess.run(["bash", str(out), "--install"], cwd=tmp_path, capture_output=True, env=_env(), timeout=60)
    assert not (tmp_path / "PWNED").exists() and not (tmp_path / "PWNED2").exists()


@pytest.mark.parametrize("bad", ["npu\ntouch PWNED\n.sh", "npu\rx.sh"])
def test_script_name_with_a_line_break_is_refused(tmp_path: Path, bad: str) -> None:
    proc = run_cli("env", "-o", str(tmp_path / bad), env=_env(), cwd=tmp_path)
    assert proc.returncode == 2 and "line break" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_rc_file_keeps_crlf_endings_and_non_utf8_bytes(tmp_path: Path) -> None:
    rc = tmp_path / "bashrc"
    original = b"alias ll='ls -l'\r\n# caf\xe9 in latin-1\r\nexport A=1\r\n"
    rc.write_bytes(original)
    os.chmod(rc, 0o600)
    out = tmp_path / "npu_env.sh"
    proc = run_cli("env", "--cann-root", str(CANN), "-o", str(out), "--rc-file", str(rc), env=_env())
    assert proc.returncode == 0, proc.stderr
    new = rc.read_bytes()
    assert new.startswith(original)  # every old byte kept as it was
    added = new[len(original):]
    assert added.count(b"\r\n") == added.count(b"\n") == 3  # our block uses the file's CRLF
    assert os.stat(rc).st_mode & 0o777 == 0o600
    again = run_cli("env", "--cann-root", str(CANN), "-o", str(out), "--rc-file", str(rc), env=_env())
    assert again.returncode == 0 and rc.read_bytes() == new  # idempotent


def test_rc_file_is_left_whole_when_the_disk_is_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rc = tmp_path / "bashrc"
    rc.write_bytes(b"export KEEP=1\n" * 200)
    before = rc.read_bytes()
    out = tmp_path / "npu_env.sh"
    out.write_bytes(b"# the previous script\n")

    def full(_fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    result = CliRunner().invoke(env_command, ["-o", str(out), "--rc-file", str(rc)])
    assert result.exit_code == 2
    assert "No space left on device" in result.output
    assert rc.read_bytes() == before and out.read_bytes() == b"# the previous script\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bashrc", "npu_env.sh"]  # no temporaries left


def test_rc_file_that_is_a_folder_is_refused_before_the_script_is_written(tmp_path: Path) -> None:
    (tmp_path / "rcdir").mkdir()
    out = tmp_path / "npu_env.sh"
    proc = run_cli("env", "-o", str(out), "--rc-file", str(tmp_path / "rcdir"), env=_env())
    assert proc.returncode == 2 and not out.exists()
