"""`ascend-migrate emulated-npu build|status|clean`."""
from __future__ import annotations

import fcntl
import json

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.emulated_npu import build as emu
from standin.conftest import npu_standin  # noqa: F401  (the session's build, for a built status)


def _runner() -> CliRunner:
    try:
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:  # click 8.2+ keeps stderr apart already
        return CliRunner()


def _env(tmp_path, **extra) -> dict:
    return {"XDG_CACHE_HOME": str(tmp_path / "cache"), emu.BUILD_DIR_ENV: None, **extra}


def test_status_of_an_empty_cache(tmp_path):
    out = _runner().invoke(cli, ["emulated-npu", "status", "--json"], env=_env(tmp_path))
    state = json.loads(out.stdout)
    assert state["built"] is False and state["cached"] == []
    assert state["cache_root"] == str(tmp_path / "cache" / "ascend-migrate" / "emulated-npu")
    assert state["supported_torch"] == "2.13.0" and len(state["source_sha256"]) == 12
    assert out.exit_code == (1 if state["missing"] else 0)
    text = _runner().invoke(cli, ["emulated-npu", "status"], env=_env(tmp_path))
    assert text.stdout.startswith("emulated npu: not built")
    assert "missing for a build:" in text.stdout


@pytest.mark.needs_torch
def test_status_and_build_of_a_built_device(npu_standin, tmp_path):  # noqa: F811
    env = _env(tmp_path, **{emu.BUILD_DIR_ENV: str(npu_standin.build_dir)})
    out = _runner().invoke(cli, ["emulated-npu", "status", "--json"], env=env)
    assert out.exit_code == 0, out.output
    state = json.loads(out.stdout)
    assert state["built"] is True and state["build_dir"] == str(npu_standin.build_dir.resolve())
    assert state["build"]["source_sha256"].startswith(state["source_sha256"])
    text = _runner().invoke(cli, ["emulated-npu", "status"], env=env)
    assert text.stdout.startswith("emulated npu: built\n") and "(from NPU_STANDIN_BUILD_DIR)" in text.stdout
    again = _runner().invoke(cli, ["emulated-npu", "build"], env=env)
    assert again.exit_code == 0 and again.stdout.startswith(f"already built: {npu_standin.build_dir.resolve()}")


def test_build_without_a_compiler_exits_1_naming_it(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    out = _runner().invoke(cli, ["emulated-npu", "build"], env=_env(tmp_path, CXX=None, PATH=str(empty)))
    assert out.exit_code == 1
    assert "the emulated npu cannot be built here" in out.stderr
    assert "none of c++, g++, clang++ is on PATH" in out.stderr


def test_clean_removes_every_cached_build_but_one_being_built(tmp_path):
    root = tmp_path / "cache" / "ascend-migrate" / "emulated-npu"
    old, busy = root / "torch-2.12.0-py3.11-aaaaaaaaaaaa", root / "torch-2.13.0-py3.11-bbbbbbbbbbbb"
    for folder in (old, busy):
        folder.mkdir(parents=True)
        (folder / "built.json").write_text("{}")
    with open(busy / emu.LOCK, "a+") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # another process is building there
        out = _runner().invoke(cli, ["emulated-npu", "clean"], env=_env(tmp_path))
        assert out.exit_code == 0, out.output
        assert f"removed {old}" in out.stdout and f"left {busy}: a build is in progress there" in out.stdout
        assert not old.exists() and busy.exists()
    out = _runner().invoke(cli, ["emulated-npu", "clean"], env=_env(tmp_path))
    assert out.stdout.strip() == f"removed {busy}" and not busy.exists()
    out = _runner().invoke(cli, ["emulated-npu", "clean"], env=_env(tmp_path))
    assert out.exit_code == 0 and out.stdout.strip() == f"nothing to remove under {root}"


def test_help_says_what_it_is_and_is_not():
    out = _runner().invoke(cli, ["emulated-npu", "--help"])
    assert out.exit_code == 0
    for words in ("CPU-backed device", "What it is not", "numerics", "--device emulated-npu", "torch 2.13.0"):
        assert words in out.stdout
