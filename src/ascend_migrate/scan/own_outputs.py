"""Recognise files this tool wrote, so its outputs are never read back as project inputs.

Reports (`scan -o`, validation, comparison), change lists and confirmation files carry a
`"schema": "ascend-migrate/<kind>/<n>"` field near their start; SARIF reports name the tool
as their driver. Files a user writes for the tool (thresholds, goldens) are inputs and are
not matched.
"""
from __future__ import annotations

import re
from typing import Optional

OUTPUT_KINDS = ("scan", "changes", "validation-report", "comparison-report", "validation-confirmations")
_SCHEMA = re.compile(rb'"schema"\s*:\s*"ascend-migrate/(' + "|".join(OUTPUT_KINDS).encode() + rb')/')
_SARIF = re.compile(rb'"\$schema"\s*:\s*"[^"]*sarif')
_SARIF_DRIVER = re.compile(rb'"driver"\s*:\s*\{\s*"name"\s*:\s*"ascend-migrate"')
HEAD = 4096


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
