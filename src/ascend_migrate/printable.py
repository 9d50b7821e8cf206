"""Text from a scanned tree or a log, made safe to print.

File names, file contents, log lines and the fields of a shared skill's replay.json are
written by someone else. Printed raw, an escape sequence in them drives the terminal (CSI
clears the screen or recolours text, OSC sets the window title or, with OSC 52, writes the
clipboard), a carriage return overdraws the line, and a line break in a file name starts a
report line the tool never wrote. `printable` is the one place that turns such text into
something to show: every C0 and C1 control character, DEL, the Unicode line and paragraph
separators and the bidirectional controls that reorder what is displayed are written as
visible escapes (`\\x1b`, `\\n`, `\\u202e`), and a byte of a name that is not UTF-8 (kept as a
surrogate escape while scanning) as `\\xNN`. Everything else is left as it is, so ordinary
names and messages print unchanged.

Text reports (terminal, Markdown) pass every string of the report through `printable_data`;
commands pass the tree-derived parts of their messages through `printable`.
"""
from __future__ import annotations

import re
from typing import Any

# C0, DEL and C1 controls; Arabic letter mark, LRM/RLM, line and paragraph separators,
# embeddings/overrides and isolates (they reorder what a terminal shows); lone surrogates
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, as `surrogateescape` keeps it
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: Any, keep: str = "") -> str:
    """`text` with every control character shown as an escape (see the module docstring).

    `keep`: characters to leave as they are, for text whose line breaks or tabs are the
    tool's own layout (a multi-line message); never for a file name, whose line break would
    forge a line of its own."""
    text = str(text)
    if text.isprintable():  # the common case: one C-level check, nothing to escape
        return text
    return _UNSAFE.sub(lambda m: m.group(0) if m.group(0) in keep else _escape(m.group(0)), text)


def printable_data(data: Any) -> Any:
    """`data` (a report's dicts, lists and strings) with every string passed through
    `printable`, keys included; other values are returned as they are. Strings that need
    nothing are kept as the same objects."""
    if isinstance(data, str):
        return printable(data)
    if isinstance(data, dict):
        return {printable_data(k): printable_data(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [printable_data(v) for v in data]
    return data
