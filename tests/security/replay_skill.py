"""A hand-made model skill for the replay tests: replay.json, manual.patch and files/, each part
replaceable, so a test states only what is unusual about its skill."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from .conftest import run_cli, snapshot


def new_file_patch(rel: str, line: str = "VALUE = 1") -> str:
    return (f"diff --git a/{rel} b/{rel}\nnew file mode 100644\n--- /dev/null\n+++ b/{rel}\n"
            f"@@ -0,0 +1 @@\n+{line}\n")


def make_skill(folder: Path, *, patch: str = "", files: Optional[dict[str, bytes]] = None,
               binary: tuple = (), listed: Optional[list] = None, deleted: tuple = (),
               entry: Optional[dict] = None, tree: Any = None, options: Optional[dict] = None,
               record: Optional[dict] = None) -> Path:
    """`listed`: manual_patch.files (default: what `patch` creates, read from its +++ lines)."""
    folder.mkdir(parents=True)
    for rel, data in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    (folder / "manual.patch").write_text(patch, encoding="utf-8", errors="surrogateescape")
    if listed is None:
        listed = [line[6:] for line in patch.splitlines() if line.startswith("+++ b/")]
    body = {
        "schema": "ascend-migrate/replay/1", "model": "m",
        "migrate": {"options": {"style": "transfer", **(options or {})},
                    "command": "ascend-migrate migrate . --write"},
        "manual_patch": {"file": "manual.patch", "files": listed, "binary_files": list(binary),
                         "deleted_binary": list(deleted)},
        "tree": tree if tree is not None else {"sha256": "0" * 64, "excluded": [], "manifest": {}},
        "entry": entry or {},
        **(record or {}),
    }
    (folder / "replay.json").write_text(json.dumps(body))
    return folder


def replay_refused(skill: Path, target: Path, *words: str, timeout: float = 60) -> str:
    """Run the replay; assert exit 2 with TARGET untouched (not even migrated); the error text."""
    before = snapshot(target)
    proc = run_cli("replay", str(skill), str(target), timeout=timeout)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "internal error" not in proc.stderr, proc.stderr
    assert "tree reproduced" not in proc.stdout
    for word in words:
        assert word in proc.stderr, proc.stderr
    assert snapshot(target) == before, "the replay wrote into TARGET before refusing"
    return proc.stderr
