"""The scanner's output model: findings located on exact source ranges, with optional edits.

Positions follow Python's `ast`: lines are 1-based, columns are 0-based offsets in
characters of the decoded line. An `Edit` replaces the text between two positions; the
migrator applies edits (the model Ruff uses), so nothing outside an edited range changes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Split like the Python tokenizer does (\\n, \\r\\n, \\r only), keeping line ends.

    str.splitlines() also splits on form feeds and Unicode separators, which would put
    positions out of step with `ast` line numbers.
    """
    lines = []
    start = 0
    for m in _LINE_BREAK.finditer(text):
        lines.append(text[start:m.end()])
        start = m.end()
    if start < len(text):
        lines.append(text[start:])
    return lines

SEVERITIES = ("info", "warning", "error")
CONFIDENCES = ("low", "medium", "high")


@dataclass(frozen=True, order=True)
class Position:
    line: int
    col: int


@dataclass(frozen=True)
class Edit:
    """Replace the text in [start, end) with `text` (an insertion when start == end)."""

    start: Position
    end: Position
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": [self.start.line, self.start.col],
            "end": [self.end.line, self.end.col],
            "text": self.text,
        }


@dataclass(frozen=True)
class Fix:
    """A set of edits for one finding, valid for one migration style."""

    style: str  # "transfer" | "agnostic"
    edits: tuple[Edit, ...]
    safety: str  # "safe" | "unsafe"
    description: str = ""
    requires: tuple[str, ...] = ()  # helper snippets the file must gain (e.g. "device_type")

    def to_dict(self) -> dict[str, Any]:
        return {
            "style": self.style,
            "safety": self.safety,
            "description": self.description,
            "edits": [e.to_dict() for e in self.edits],
            "requires": list(self.requires),
        }


@dataclass(frozen=True)
class Finding:
    rule: str
    path: str  # POSIX path relative to the scan root
    line: int
    col: int
    end_line: int
    end_col: int
    message: str
    severity: str
    confidence: str = "high"
    snippet: str = ""
    symbol: str = ""  # the resolved qualified name or matched text
    fixes: tuple[Fix, ...] = field(default=(), compare=False)

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.col, self.rule, self.symbol)

    def to_dict(self) -> dict[str, Any]:
        """The fields in declaration order, fixes as dicts (what `asdict` gives, built directly:
        `asdict` deep-copies every value, a large part of rendering a big report)."""
        return {"rule": self.rule, "path": self.path, "line": self.line, "col": self.col,
                "end_line": self.end_line, "end_col": self.end_col, "message": self.message,
                "severity": self.severity, "confidence": self.confidence, "snippet": self.snippet,
                "symbol": self.symbol, "fixes": [f.to_dict() for f in self.fixes]}

    def fix_for(self, style: str) -> Optional[Fix]:
        for fix in self.fixes:
            if fix.style == style:
                return fix
        return None
