"""ensure_built says what is missing before it compiles anything, and keeps the compiler's own
words when the compile itself fails."""
from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from ascend_migrate.emulated_npu import build as emu
from emulated_npu.support import child_env, ensure_built_in_child, require_buildable


def test_a_cxx_that_names_nothing_is_named(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    ran = ensure_built_in_child(child_env(tmp_path, CXX="/nonexistent", PATH=str(empty)))
    assert ran.returncode == 3, ran.stdout + ran.stderr
    assert "the emulated npu cannot be built here" in ran.stdout
    assert "no C++ compiler: CXX=/nonexistent names no program that can be run" in ran.stdout
    assert not (tmp_path / "cache").exists()  # refused before anything was made


def test_no_compiler_on_path_names_the_packages(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    ran = ensure_built_in_child(child_env(tmp_path, CXX=None, PATH=str(empty)))
    assert ran.returncode == 3, ran.stdout + ran.stderr
    said = ran.stdout
    assert "no C++ compiler: CXX is unset and none of c++, g++, clang++ is on PATH" in said
    assert "apt-get install g++" in said and "dnf install gcc-c++" in said
    assert not (tmp_path / "cache").exists()


def test_every_missing_piece_is_listed_at_once(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    monkeypatch.setattr(emu, "python_header", lambda: tmp_path / "include" / "Python.h")
    monkeypatch.setattr(emu, "find_ninja", lambda: None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(emu.BUILD_DIR_ENV, raising=False)
    with pytest.raises(emu.EmulatedNpuError) as refused:
        emu.ensure_built()
    said = str(refused.value)
    assert "torch is not importable" in said and "pip install torch==2.13.0" in said
    assert "no C++ compiler: CXX=" in said
    assert "no Python headers" in said and "python3-dev" in said and "python3-devel" in said
    assert "no ninja" in said and "pip install ninja" in said
    assert not (tmp_path / "cache").exists()


def test_another_torch_release_is_named(monkeypatch, tmp_path):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch, "__version__", "2.14.0+cpu")
    problems = emu.missing()
    assert any("torch 2.14.0+cpu is installed, but the emulated npu is written against torch 2.13.0" in p
               for p in problems)


def test_a_failing_compile_keeps_the_compilers_last_lines(tmp_path):
    require_buildable()
    real, _ = emu.find_compiler()
    fake = tmp_path / "fake-cxx"  # answers version queries as the real one does, fails every compile
    fake.write_text("#!/bin/sh\n"
                    "for a in \"$@\"; do if [ \"$a\" = -c ]; then\n"
                    "  echo 'fake-cxx: error: this compiler only pretends' >&2; exit 1\n"
                    "fi; done\n"
                    f"exec '{real}' \"$@\"\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    ran = ensure_built_in_child(child_env(tmp_path, CXX=str(fake)))
    assert ran.returncode == 3, ran.stdout + ran.stderr
    assert "building the emulated npu in" in ran.stdout and "failed" in ran.stdout
    assert "fake-cxx: error: this compiler only pretends" in ran.stdout
    folders = list((tmp_path / "cache" / "ascend-migrate" / "emulated-npu").iterdir())
    assert len(folders) == 1 and not (folders[0] / emu.MARKER).exists()  # nothing claims to be built


def test_importing_the_package_puts_nothing_on_a_path(tmp_path):
    code = ("import importlib.util, sys; before = list(sys.path); "
            "import ascend_migrate.emulated_npu, ascend_migrate.emulated_npu.cli; "
            "assert sys.path == before, sys.path; print(importlib.util.find_spec('torch_npu'))")
    ran = subprocess.run([sys.executable, "-c", code], env=child_env(tmp_path), capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "None"


def test_emulated_env_is_a_childs_environment_only(tmp_path):
    base = {"PATH": os.defpath, "PYTHONPATH": "/somewhere", emu.BUILD_DIR_ENV: str(tmp_path / "b")}
    before_base, before_environ = dict(base), dict(os.environ)
    env = emu.emulated_env(base, device_count=2, release="2.1.0")
    assert base == before_base and dict(os.environ) == before_environ
    parts = env["PYTHONPATH"].split(os.pathsep)
    assert parts[0] == str(emu.SITE) and parts[-1] == "/somewhere"
    assert env[emu.BUILD_DIR_ENV] == str((tmp_path / "b").resolve())
    assert env[emu.DEVICE_COUNT_ENV] == "2" and env[emu.RELEASE_ENV] == "2.1.0" and env[emu.EMULATED_ENV] == "1"
    assert str(emu.SITE) not in sys.path
    with pytest.raises(ValueError):
        emu.emulated_env(base, device_count=0)


def test_cache_folder_names_torch_python_and_source(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(emu.BUILD_DIR_ENV, raising=False)
    folder = emu.build_dir("2.13.0+cpu")
    tag = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert folder == tmp_path / "ascend-migrate" / "emulated-npu" / f"torch-2.13.0+cpu-py{tag}-{emu.source_sha256()[:12]}"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # ignored, as the XDG specification says
    assert emu.cache_root() == emu.Path.home() / ".cache" / "ascend-migrate" / "emulated-npu"
