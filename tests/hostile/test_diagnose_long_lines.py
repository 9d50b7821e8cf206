"""diagnose keeps memory flat whatever the line length, and still finds signatures in long lines.

Bounds stated here: peak RSS of a diagnose run (measured in a fresh subprocess with
resource.getrusage, interpreter and knowledge base included) stays under MAX_RSS_MB on a
100 MB single-line log and on a 4 MB gzip file that inflates to one 200 MB line (the 1 GB line
of the report behaves the same, five times longer; 200 MB keeps the test short); each run
takes under MAX_SECONDS.
"""
from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ascend_migrate.diagnose import engine

MAX_RSS_MB = 100  # measured about 40 MB; before windows a 100 MB line took about 500 MB
MAX_SECONDS = 60
CHUNK = ("worker step 1234 loss 0.25 lr 0.001 tokens 4096 " * 32)[:1000]
SIGNATURE = " EH9999: init env failed "

PROBE = r"""
import json, resource, sys, time
from ascend_migrate.diagnose.engine import Diagnoser, open_log
start = time.process_time()
d = Diagnoser()
with open_log(sys.argv[1]) as stream:
    d.feed_stream(stream, sys.argv[1])
def peak_mb():
    # VmHWM is this process's own peak: ru_maxrss also counts the parent it was forked from
    # (Linux carries the old memory's high-water mark across exec), so a large test runner
    # would be measured instead of diagnose.
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"rss_mb": peak_mb(),
                  "seconds": time.process_time() - start, "lines": d.lines, "notes": d.notes,
                  "ids": sorted({m.id for m in d.matches()})}))
"""


def _write_line(fh, total: int) -> None:
    """One line of `total` bytes with a signature in its middle, written 1 MB at a time."""
    block = (CHUNK * 1024).encode()
    written = 0
    while written < total:
        piece = block[: min(len(block), total - written)]
        if written <= total // 2 < written + len(piece):
            piece = piece[: len(piece) // 2] + SIGNATURE.encode() + piece[len(piece) // 2 + len(SIGNATURE):]
        fh.write(piece)
        written += len(piece)
    fh.write(b"\nlast line\n")


def _bytecode() -> dict:
    """The run's byte-code settings (make sends byte-code outside the checkout), nothing else."""
    return {k: os.environ[k] for k in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE") if k in os.environ}


def _probe(path: Path) -> dict:
    src = Path(engine.__file__).parents[2]
    out = subprocess.run([sys.executable, "-c", PROBE, str(path)], capture_output=True, text=True,
                         timeout=MAX_SECONDS * 3, env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin", **_bytecode()})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("kind", ["plain-100MB", "gzip-200MB"])
def test_one_huge_line_keeps_memory_flat(tmp_path, kind):
    path = tmp_path / ("log.txt" if kind.startswith("plain") else "log.txt.gz")
    if kind.startswith("plain"):
        with path.open("wb") as fh:
            _write_line(fh, 100 << 20)
    else:
        with gzip.open(path, "wb", compresslevel=6) as fh:
            _write_line(fh, 200 << 20)
        assert path.stat().st_size < 8 << 20  # a small file that inflates 25 times and more
    result = _probe(path)
    assert result["rss_mb"] < MAX_RSS_MB, result
    assert result["seconds"] < MAX_SECONDS, result
    assert result["lines"] == 2 and "init-env-failed-500001" in result["ids"]
    assert result["notes"] and "read in windows" in result["notes"][0]


def test_signature_across_a_window_edge_is_found(monkeypatch):
    """Windows overlap by MAX_SIGNATURE_CHARS: a match cut by one window edge is whole in the next."""
    monkeypatch.setattr(engine, "LINE_WINDOW_CHARS", 1000)
    monkeypatch.setattr(engine, "MAX_SIGNATURE_CHARS", 100)
    monkeypatch.setattr(engine, "BLOCK_CHARS", 500)
    for offset in range(880, 1010, 7):  # the signature straddles the first edge at 1000
        line = "x" * offset + SIGNATURE + "y" * 3000
        d = engine.Diagnoser()
        d.feed_stream(io.StringIO("first\n" + line + "\nEH0000 other\n"), "log")
        assert d.lines == 3 and [m.id for m in d.matches() if m.id == "init-env-failed-500001"], offset
        assert [m.line_no for m in d.matches() if m.id == "init-env-failed-500001"] == [2]
