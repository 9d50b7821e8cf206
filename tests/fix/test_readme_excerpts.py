"""The diffs the documentation shows are what the migrator does to the example today.

The README and every page under docs/ are read (the excerpts live in docs/migrate.md). A block
after `<!-- migrate-excerpt: STYLE -->` is an excerpt of `ascend-migrate migrate
examples/cifar_trainer --style STYLE`: every hunk header it shows must be in the real diff, and
the lines under it must open that real hunk (an excerpt may stop early).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ascend_migrate.fix.api import migrate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "cifar_trainer"
BLOCK = re.compile(r"<!-- migrate-excerpt: (\w+) -->\n```diff\n(.*?)```", re.S)


def _hunks(diff: str) -> dict[tuple[str, str], list[str]]:
    """(file, @@ header) -> the hunk's lines."""
    hunks: dict[tuple[str, str], list[str]] = {}
    current = None
    path = ""
    for line in diff.splitlines():
        if line.startswith("+++ "):
            path = line[4:]
            current = None
        elif line.startswith("@@"):
            current = hunks.setdefault((path, line), [])
        elif current is not None and not line.startswith("--- "):
            current.append(line)
    return hunks


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
EXCERPTS = [found for page in DOCS for found in BLOCK.findall(page.read_text(encoding="utf-8"))]


def test_docs_have_excerpts():
    assert {style for style, _ in EXCERPTS} == {"transfer", "agnostic"}
    assert BLOCK.findall((ROOT / "docs" / "migrate.md").read_text(encoding="utf-8")), "docs/migrate.md shows no diff"


@pytest.mark.parametrize("style,block", EXCERPTS, ids=[s for s, _ in EXCERPTS])
def test_readme_excerpt_matches_the_migrator(style, block):
    real = _hunks(migrate(EXAMPLE, style=style).diff())
    shown = _hunks(block)
    assert shown, "the excerpt has no hunk"
    for key, lines in shown.items():
        assert key in real, f"the docs show {key}, the migrator's {style} diff has {sorted(real)}"
        assert real[key][: len(lines)] == lines, f"docs hunk {key} differs from the migrator's"
