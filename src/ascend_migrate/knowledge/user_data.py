"""The user's own knowledge: coverage files `kb sync` wrote, kept outside the installed package.

The installed package is read, never written: a sync from a wheel of unknown origin must not
change what every later scan on the machine (or every user of a shared installation) believes.
Synced coverage lives in `$XDG_DATA_HOME/ascend-migrate/coverage` (`~/.local/share/...` when
XDG_DATA_HOME is unset or relative, as the XDG specification asks); the coverage loader reads
that folder first, so a release synced there stands in for the packaged one, and `kb` says so.

Only the standard library here: the stored-report check of a re-scan asks for this folder's
listing before anything heavier is imported.
"""
from __future__ import annotations

import os
from pathlib import Path

COVERAGE_GLOB = "torch_npu-*.json"


def data_home() -> Path:
    """`$XDG_DATA_HOME/ascend-migrate`, else `~/.local/share/ascend-migrate`."""
    configured = os.environ.get("XDG_DATA_HOME", "")
    base = Path(configured) if configured and os.path.isabs(configured) else Path.home() / ".local" / "share"
    return base / "ascend-migrate"


def user_coverage_dir() -> Path:
    """Where `kb sync` writes by default, and the loader looks before the packaged coverage."""
    return data_home() / "coverage"


def user_coverage_files() -> list[Path]:
    """The coverage files in the user's folder, sorted by name (none when it does not exist)."""
    try:
        return sorted(user_coverage_dir().glob(COVERAGE_GLOB))
    except OSError:
        return []


def user_coverage_listing() -> list[tuple[str, int, int, int]]:
    """(name, size, modification time, inode) of each user coverage file: part of every cache
    key of scan results, which depend on the coverage as much as on the packaged knowledge."""
    out = []
    for path in user_coverage_files():
        try:
            st = path.stat()
        except OSError:
            continue
        out.append((path.name, st.st_size, st.st_mtime_ns, st.st_ino))
    return out
