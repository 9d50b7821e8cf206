"""The program entry answers a re-scan of an unchanged tree from the stored report without
the CLI framework, and is indistinguishable from the full CLI: same stdout bytes, same
report file, same stderr, same exit code, for hits and misses, every format and option.

Both sides run as real processes (stdout is a pipe, as for an agent). The scan time is the
one part of a report that differs between runs, so both run with a clock that stands still
(the time then reads 0 on both sides), and with the racy-file window off (the test's files
are seconds old)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_migrate.scan import cli as scan_cli
from ascend_migrate.scan.stored_report_cli import FAIL_LEVELS, parse_scan_args
from scan.report_cli import UTIL, write_project

SRC = str(Path(__file__).resolve().parents[2] / "src")


# Runs `main` of the given module with a frozen clock and no racy window; reports on stderr's
# last line whether click was imported (only when asked, so stderr compares otherwise).
RUNNER = """
import sys, time
time.perf_counter = lambda: 5.0
from ascend_migrate.scan import report_snapshot
report_snapshot.RACY_NS = 0
from {module} import main
try:
    main()
finally:
    if {tell}:
        sys.stderr.write("click imported: %s\\n" % ("click" in sys.modules))
"""


@pytest.fixture
def project(tmp_path) -> Path:
    return write_project(tmp_path / "proj")


def _run(module: str, args: list[str], cache: Path, tell: bool = False,
         env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, ASCEND_MIGRATE_CACHE_DIR=str(cache), PYTHONPATH=SRC, PYTHONIOENCODING="utf-8")
    env.pop("NO_COLOR", None)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-c", RUNNER.format(module=module, tell=tell), *args],
                          capture_output=True, env=env, timeout=120)


FAST, FULL = "ascend_migrate.entry", "ascend_migrate.cli"


def _same(a: subprocess.CompletedProcess, b: subprocess.CompletedProcess) -> None:
    assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr)


@pytest.mark.parametrize("fmt", ["text", "json", "md", "sarif", "csv"])
def test_a_hit_on_stdout_is_the_full_clis_output_without_click(project, tmp_path, fmt):
    cache = tmp_path / "cache"
    args = ["scan", str(project), "--format", fmt]
    first = _run(FULL, args, cache)  # a miss: scans and stores the report
    assert first.returncode == 1 and first.stdout  # error-level findings, --fail-on error
    fast = _run(FAST, args, cache, tell=True)
    assert fast.stderr.endswith(b"click imported: False\n"), fast.stderr
    full = _run(FULL, args, cache)
    fast.stderr = fast.stderr[:-len(b"click imported: False\n")]
    _same(fast, full)
    _same(fast, first)


@pytest.mark.parametrize("fmt", ["json", "text", "sarif"])
def test_a_hit_into_a_file_writes_the_same_file_and_lines(project, tmp_path, fmt):
    cache = tmp_path / "cache"
    full_out, fast_out = tmp_path / "full.out", tmp_path / "fast.out"
    _run(FULL, ["scan", str(project), "--format", fmt, "-o", str(tmp_path / "first.out")], cache)
    full = _run(FULL, ["scan", str(project), "--format", fmt, "-o", str(full_out), "--fail-on", "never", "-v"], cache)
    fast = _run(FAST, ["scan", str(project), "--format", fmt, "-o", str(fast_out), "--fail-on", "never", "-v"], cache,
                tell=True)
    assert fast.stderr.endswith(b"click imported: False\n")
    assert full.returncode == fast.returncode == 0
    assert fast.stdout == full.stdout == b""
    assert fast.stderr[:-len(b"click imported: False\n")].replace(b"fast.out", b"X") == \
        full.stderr.replace(b"full.out", b"X")
    assert b"wrote " in full.stderr and b"scanned " in full.stderr
    assert fast_out.read_bytes() == full_out.read_bytes() == (tmp_path / "first.out").read_bytes()
    assert (fast_out.stat().st_mode & 0o777) == (full_out.stat().st_mode & 0o777)


@pytest.mark.parametrize("extra", [
    ["--select", "CU", "--fail-on", "warning"],
    ["--ignore", "DV", "-q"],
    ["--exclude", "pkg/*", "-v"],
    ["--color"],
    ["--no-color", "--fail-on", "never"],
    ["-j", "1", "--torch-npu", "2.1.0", "--entry", "train.py"],
])
def test_options_that_change_the_output_give_the_same_output(project, tmp_path, extra):
    cache = tmp_path / "cache"
    args = ["scan", str(project), *extra]
    first = _run(FULL, args, cache)
    fast = _run(FAST, args, cache, tell=True)
    full = _run(FULL, args, cache)
    assert fast.stderr.endswith(b"click imported: False\n"), (fast.stderr, first.stderr)
    fast.stderr = fast.stderr[:-len(b"click imported: False\n")]
    _same(fast, full)
    _same(fast, first)
    if extra == ["--color"]:
        assert b"\x1b[" in fast.stdout


def test_an_edit_is_patched_without_the_full_cli_and_a_miss_runs_it(project, tmp_path):
    cache = tmp_path / "cache"
    args = ["scan", str(project), "--format", "json"]
    _run(FULL, args, cache)
    (project / "pkg" / "util.py").write_text(UTIL + "\n\ndef more():\n    return 'nccl'\n", encoding="utf-8")
    fast = _run(FAST, args, cache, tell=True)
    assert fast.stderr.endswith(b"click imported: False\n")  # patched from the ledger
    assert b"return 'nccl'" in fast.stdout
    fast.stderr = fast.stderr[:-len(b"click imported: False\n")]
    _same(fast, _run(FULL, [*args, "--no-cache"], cache))
    (project / "pkg" / "more.py").write_text("import torch\nx = torch.cuda.is_available()\n", encoding="utf-8")
    fast = _run(FAST, args, cache, tell=True)  # a new file: the ledger cannot tell, a real scan
    assert fast.stderr.endswith(b"click imported: True\n")
    assert b"pkg/more.py" in fast.stdout
    fast.stderr = fast.stderr[:-len(b"click imported: True\n")]
    _same(fast, _run(FULL, [*args, "--no-cache"], cache))
    (project / "pkg" / "util.py").unlink()  # a deletion is a miss too
    fast = _run(FAST, args, cache, tell=True)
    assert fast.stderr.endswith(b"click imported: True\n")
    assert b"util.py" not in fast.stdout


@pytest.mark.parametrize("args", [
    ["scan", "{root}", "--format=json"],
    ["scan", "{root}", "-j0"],
    ["scan", "{root}", "--no-cache"],
    ["scan", "{root}/nothing-here"],
    ["scan", "{root}", "--format", "xml"],
    ["scan", "{root}", "--help"],
    ["scan", "{root}", "--docs-base", "not-a-url"],
    ["scan", "{root}", "--format", "json", "--format", "text"],
])
def test_command_lines_it_does_not_handle_go_to_the_full_cli(project, tmp_path, args):
    cache = tmp_path / "cache"
    args = [a.format(root=project) for a in args]
    _run(FULL, args, cache)
    fast = _run(FAST, args, cache, tell=True)
    assert fast.stderr.endswith(b"click imported: True\n")
    full = _run(FULL, args, cache)
    fast.stderr = fast.stderr[:-len(b"click imported: True\n")]
    _same(fast, full)


def test_parse_reads_plain_spellings_and_refuses_the_rest(tmp_path):
    opts = parse_scan_args(["p", "--format", "sarif", "-o", "r.sarif", "--select", "CU", "--select", "DV",
                            "-j", "2", "--no-color", "-q"])
    assert opts is not None
    assert (opts["fmt"], str(opts["output"]), opts["select"], opts["color"], opts["verbosity"]) == \
        ("sarif", "r.sarif", ("CU", "DV"), False, -1)
    for refused in (["p", "-q", "-v"], ["p", "q"], [], ["p", "--select"], ["p", "--select", "-x"],
                    ["p", "-qv"], ["p", "--", "x"], ["p", "--fail-on", "critical"], ["p", "-j", "²"]):
        assert parse_scan_args(refused) is None, refused


def test_fail_levels_match_the_cli():
    assert FAIL_LEVELS == scan_cli.FAIL_LEVELS


def test_a_damaged_report_body_is_not_served(project, tmp_path):
    cache = tmp_path / "cache"
    args = ["scan", str(project), "--format", "json"]
    first = _run(FULL, args, cache)
    [snap] = (cache / "report").glob("*.snapshot")
    data = bytearray(snap.read_bytes())
    at = data.rindex(b"DV")
    data[at:at + 2] = b"XX"  # same length, different bytes
    snap.write_bytes(bytes(data))
    for ledger in (cache / "report").glob("*.ledger"):  # else the report is patched from it (below)
        ledger.rename(ledger.with_suffix(".kept"))
    fast = _run(FAST, args, cache, tell=True)
    assert fast.stderr.endswith(b"click imported: True\n")
    assert fast.stdout == first.stdout
    snap.write_bytes(bytes(data))  # damaged again, now with the ledger: the report is patched from it
    for ledger in (cache / "report").glob("*.kept"):
        ledger.rename(ledger.with_suffix(".ledger"))
    fast = _run(FAST, args, cache, tell=True)
    assert fast.stderr.endswith(b"click imported: False\n")
    assert fast.stdout == first.stdout


def test_a_reader_that_went_away_ends_both_the_same_way(project, tmp_path):
    cache = tmp_path / "cache"
    args = ["scan", str(project), "--format", "json"]
    _run(FULL, args, cache)
    env = dict(os.environ, ASCEND_MIGRATE_CACHE_DIR=str(cache), PYTHONPATH=SRC, PYTHONIOENCODING="utf-8")
    outcomes = []
    for module in (FAST, FULL):
        read_end, write_end = os.pipe()
        os.close(read_end)  # every write fails with EPIPE, whatever the pipe's size and timing
        try:
            proc = subprocess.run([sys.executable, "-c", RUNNER.format(module=module, tell=False), *args],
                                  stdout=write_end, stderr=subprocess.PIPE, env=env, timeout=120)
        finally:
            os.close(write_end)
        outcomes.append((proc.returncode, proc.stderr))
    assert outcomes[0] == outcomes[1] == (141, b"")
