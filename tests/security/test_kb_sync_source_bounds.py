"""`kb sync` of a wheel whose Python source is small on disk and huge to parse.

An 11 KB deflated wheel whose `torch_npu/npu/__init__.py` is `__all__ = ['a', 'a', ...]` with
2,000,000 items took 36-52 s and 2 GB: the source was inflated (8 MB, under the member cap)
and parsed whole, and each overlay parsed it again. A Python source is now read up to
sync.MAX_SOURCE_BYTES and parsed only below sync.MAX_SOURCE_TOKENS words and symbols; either
bound refuses the wheel (exit 2, one line); `__all__` is read once per module.
"""
from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

from ascend_migrate.cli import cli
from ascend_migrate.knowledge import sync

WHEEL_KIT = Path(__file__).resolve().parents[1] / "kbsync"
NPU_INIT = "torch_npu/npu/__init__.py"
MAX_SECONDS = 8
MAX_PEAK_MB = 120


@pytest.fixture
def kit(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.syspath_prepend(str(WHEEL_KIT))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    import kbsync_wheelkit

    return kbsync_wheelkit


def _sync(wheel: Path, out: Path):
    tracemalloc.start()
    start = time.perf_counter()
    try:
        result = CliRunner().invoke(cli, ["kb", "sync", "--wheel", str(wheel), "--out", str(out)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return result, time.perf_counter() - start, peak


@pytest.mark.parametrize("items, bound", [(2_000_000, "MiB"), (400_000, "words and symbols")],
                         ids=["past the size cap", "past the token cap"])
def test_a_source_too_big_to_parse_is_refused_quickly(kit, tmp_path: Path, items: int, bound: str) -> None:
    files = kit.modern_files("9.9.3")
    files[NPU_INIT] = "__all__ = [" + "'a'," * items + "]\n"
    wheel = kit.write_wheel(tmp_path, files, name="torch_npu-9.9.3-py3-none-any.whl")
    result, took, peak = _sync(wheel, tmp_path / "kb")
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "refused" in lines[0] and bound in lines[0] and NPU_INIT in lines[0], lines
    assert took < MAX_SECONDS and peak < MAX_PEAK_MB << 20, (took, peak >> 20)
    assert not (tmp_path / "kb").exists()


def test_a_large_source_under_the_bounds_is_read_once(kit, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = kit.modern_files("9.9.4")
    files[NPU_INIT] = "__all__ = [" + "".join(f"'n{i}', " for i in range(20_000)) + "]\n"
    wheel = kit.write_wheel(tmp_path, files, name="torch_npu-9.9.4-py3-none-any.whl")
    parses: list[str] = []
    real = sync.parse_source
    monkeypatch.setattr(sync, "parse_source", lambda text, path: (parses.append(path), real(text, path))[1])
    result, took, _ = _sync(wheel, tmp_path / "kb")
    assert result.exit_code == 0, result.output
    assert parses.count(NPU_INIT) == 1, parses
    assert took < MAX_SECONDS, took


def test_an_installed_tree_has_the_same_bound(kit, tmp_path: Path) -> None:
    files = kit.modern_files("9.9.5")
    files[NPU_INIT] = "__all__ = [" + "'a'," * 600_000 + "]\n"
    site = kit.write_tree(tmp_path / "site", files)
    result = CliRunner().invoke(cli, ["kb", "sync", "--site-packages", str(site), "--out", str(tmp_path / "kb")])
    assert result.exit_code == 2 and "larger than 2 MiB" in result.output, result.output


def test_lists_that_double_are_refused(kit, tmp_path: Path) -> None:
    """`__all__ += __all__` thirty times is a small source asking for a billion names."""
    files = kit.modern_files("9.9.6")
    files[NPU_INIT] = "__all__ = ['a', 'b']\n" + "__all__ += __all__\n" * 30
    wheel = kit.write_wheel(tmp_path, files, name="torch_npu-9.9.6-py3-none-any.whl")
    result, took, peak = _sync(wheel, tmp_path / "kb")
    assert result.exit_code == 2 and "1,000,000" in result.output, result.output
    assert took < MAX_SECONDS and peak < MAX_PEAK_MB << 20, (took, peak >> 20)
