"""The scan benchmark's tree generator and command line (the benchmark itself is not a test)."""
from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "bench_scan.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_scan", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while the class is built
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def _python_lines(root: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in root.rglob("*.py"))


def _contents(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_generator_is_deterministic_with_exact_line_count(bench, tmp_path):
    a = bench.generate_tree(tmp_path / "a", lines=5000, seed=3)
    b = bench.generate_tree(tmp_path / "b", lines=5000, seed=3)
    assert a.python_lines == b.python_lines == 5000
    assert _python_lines(tmp_path / "a") == 5000
    assert a.digest == b.digest
    assert _contents(tmp_path / "a") == _contents(tmp_path / "b")
    other = bench.generate_tree(tmp_path / "c", lines=5000, seed=4)
    assert other.digest != a.digest and other.python_lines == 5000


def test_generated_tree_is_realistic(bench, tmp_path):
    stats = bench.generate_tree(tmp_path / "t", lines=30_000, seed=0)
    sources = {p: p.read_text(encoding="utf-8") for p in (tmp_path / "t").rglob("*.py")}
    assert len(sources) == stats.python_files > 50
    broken = [p for p, text in sources.items() if not _parses(text)]
    assert broken and all("legacy/broken_" in p.as_posix() for p in broken)
    with_cuda = [p for p, text in sources.items() if "cuda" in text]
    assert 0.05 < len(with_cuda) / len(sources) < 0.6  # some modules use CUDA, most do not
    assert any(len(text.splitlines()) > 1000 for text in sources.values())
    assert any("__main__" in text for text in sources.values())
    assert list((tmp_path / "t").rglob("*.cu")) and (tmp_path / "t" / "requirements.txt").is_file()


def test_tiny_tree(bench, tmp_path):
    stats = bench.generate_tree(tmp_path / "t", lines=bench.MIN_LINES, seed=0)
    assert stats.python_lines == _python_lines(tmp_path / "t") == bench.MIN_LINES
    with pytest.raises(ValueError):
        bench.generate_tree(tmp_path / "u", lines=bench.MIN_LINES - 1)


def test_cached_tree_is_reused(bench, tmp_path):
    first = bench.cached_tree(3000, 1, tmp_path / "cache")
    marker = Path(first.root) / "proj" / "constants.py"
    stamp = marker.stat().st_mtime_ns
    again = bench.cached_tree(3000, 1, tmp_path / "cache")
    assert again == first and marker.stat().st_mtime_ns == stamp
    assert (tmp_path / "cache" / ".gitignore").read_text(encoding="utf-8").strip().endswith("*")


def test_combined_pattern_covers_the_seed_patterns(bench):
    import re

    assert len(bench.SEED_PATTERNS) == 10
    combined = re.compile(bench.COMBINED_PATTERN)
    for sample in ("torch.cuda.amp.autocast", "x = torch.cuda.CUDAGraph()", "nn.DataParallel(m)",
                   'init_process_group("hccl")', "torch.cuda.get_device_properties(0).major"):
        assert combined.search(sample), sample


def test_help_runs(tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    for option in ("--lines", "--repeat", "--tree", "--json", "--cli"):
        assert option in proc.stdout


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True
