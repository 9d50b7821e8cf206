"""Where ascend-migrate keeps its caches (a light module: the CLI reads it before importing
the analysers)."""
from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """`$ASCEND_MIGRATE_CACHE_DIR`, else `$XDG_CACHE_HOME/ascend-migrate`, else `~/.cache/ascend-migrate`."""
    base = os.environ.get("ASCEND_MIGRATE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ascend-migrate")
    return Path(base)
