"""An exclusive lock on a file, held across processes: concurrent callers that fill the same
folder (ranks of one run building the emulated npu, parallel test workers filling a cache) wait
for the one that holds it instead of racing."""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator


@contextlib.contextmanager
def exclusive(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive lock on `lock_file` (created, with its folder, if missing); other
    processes wait here. Where the platform has no flock, a single caller is assumed."""
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "a+b") as handle:
        try:
            import fcntl
        except ImportError:
            yield
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
