"""Generated reference documents: every file under references/ that is derived from data.

Each area registers a renderer here ("references/NAME.md" -> "module:function" returning the
full Markdown text). `ascend-migrate docs --write` regenerates them and a test fails when a
committed file drifts from its data.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable

GENERATED: dict[str, str] = {
    "references/rules.md": "ascend_migrate.knowledge.render:render_rules_reference",
    "references/troubleshooting.md": "ascend_migrate.diagnose.render:render_reference",
    "references/validation-checklist.md": "ascend_migrate.validate.checklist:render_checklist_reference",
}


def renderer(target: str) -> Callable[[], str]:
    module_name, attr = GENERATED[target].split(":")
    return getattr(importlib.import_module(module_name), attr)


def render_all() -> dict[str, str]:
    return {target: renderer(target)() for target in GENERATED}


def write_all(repo_root: Path) -> list[str]:
    """Write every generated reference; return the ones whose content changed."""
    changed = []
    for target, text in render_all().items():
        path = repo_root / target
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            changed.append(target)
    return changed
