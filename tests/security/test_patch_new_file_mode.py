"""A file manual.patch creates gets the mode a plain create gives it (0666 less the umask).

The patch is written through a private temporary file (0600) and renamed into place; a new
module the skill adds came out readable by its owner only, unlike every other file of the
checkout. A changed file keeps its own mode.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ascend_migrate.patchfile import apply_patch

NEW = "--- /dev/null\n+++ b/pkg/added.py\n@@ -0,0 +1 @@\n+VALUE = 1\n"


@pytest.mark.parametrize("umask, expected", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_new_file_mode_follows_the_umask(tmp_path: Path, umask: int, expected: int) -> None:
    old = os.umask(umask)
    try:
        apply_patch(tmp_path, NEW)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "pkg" / "added.py").st_mode) == expected


def test_changed_file_keeps_its_mode(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("echo one\n")
    script.chmod(0o755)
    apply_patch(tmp_path, "--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n-echo one\n+echo two\n")
    assert script.read_text() == "echo two\n" and stat.S_IMODE(script.stat().st_mode) == 0o755
