"""Recognise files this tool wrote, so its outputs are never read back as project inputs.

Reports (`scan -o`, validation, comparison), change lists and confirmation files carry a
`"schema": "ascend-migrate/<kind>/<n>"` field near their start; SARIF reports name the tool
as their driver. Files a user writes for the tool (thresholds, goldens) are inputs and are
not matched.

This is the one recogniser of the tool's outputs: the tree walker (scan, migrate, validate),
the validated tree's hash and the skill generator all use it.
"""
from __future__ import annotations

import os
import re
from typing import Optional

OUTPUT_KINDS = ("scan", "changes", "validation-report", "comparison-report", "validation-confirmations")
_SCHEMA = re.compile(rb'"schema"\s*:\s*"ascend-migrate/(' + "|".join(OUTPUT_KINDS).encode() + rb')/')
_SARIF = re.compile(rb'"\$schema"\s*:\s*"[^"]*sarif')
_SARIF_DRIVER = re.compile(rb'"driver"\s*:\s*\{\s*"name"\s*:\s*"ascend-migrate"')
HEAD = 4096
# Folders written by this tool: validation state and reports, run history, the result cache.
OWN_DIRS = frozenset({".ascend-migrate", ".ascend-migrate-cache"})
# Change lists (`ascend-migrate-changes.json/.csv`) and other files the tool names after itself.
OWN_FILE_PREFIX = "ascend-migrate-"


def own_file_name(name: str) -> bool:
    """A file name this tool writes (the change lists); Python modules are never ours."""
    return name.startswith(OWN_FILE_PREFIX) and not name.lower().endswith(".py")


def is_own_output(path: "os.PathLike[str] | str") -> bool:
    """Is the file at `path` one this tool wrote: by its name, or a JSON/SARIF report of ours?"""
    name = os.path.basename(os.fspath(path))
    if own_file_name(name):
        return True
    if not name.lower().endswith((".json", ".sarif")):
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD)
    except OSError:
        return False
    return own_output_kind(name, head) is not None


def own_output_kind(name: str, data: bytes) -> Optional[str]:
    """'scan report', 'change list', ... when `data` is an ascend-migrate output, else None."""
    lower = name.lower()
    if not lower.endswith((".json", ".sarif")):
        return None
    head = data[:HEAD]
    m = _SCHEMA.search(head)
    if m:
        kind = m.group(1).decode()
        return {"scan": "scan report", "changes": "change list"}.get(kind, kind.replace("-", " "))
    if _SARIF.search(head) and _SARIF_DRIVER.search(data[:65536]):
        return "SARIF scan report"
    return None
