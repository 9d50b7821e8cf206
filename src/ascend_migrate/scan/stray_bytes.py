"""Python sources whose only non-UTF-8 bytes sit in comments.

CPython's import system compiles such a file from its bytes and accepts it (only the code's
tokens must decode), so the scanner and the migrator must treat it as source too. The text
used for analysis and rewriting stands each stray byte in for one private-use character
(U+F780 + byte - 0x80: one character per byte, so every line and column is unchanged);
`restore` turns them back into the original bytes' surrogate escapes before encoding with
`surrogateescape`, so comments come out byte for byte.
"""
from __future__ import annotations

import ast
import warnings
from typing import Optional

_BASE = 0xF780 - 0x80
_LOW, _HIGH = 0xF780, 0xF7FF


def _to_private(ch: str) -> str:
    return chr(ord(ch) - 0xDC00 + _BASE)


def decode_with_stray_bytes(data: bytes) -> Optional[str]:
    """The analysable text of UTF-8 source with stray bytes only in comments, else None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(data)  # bytes: CPython decodes token by token, as import does
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    text = data.decode("utf-8", errors="surrogateescape")
    if any(_LOW <= ord(c) <= _HIGH for c in text):
        return None  # the stand-in characters are already used: cannot round-trip
    if text.startswith("\ufeff"):
        text = text[1:]
    return "".join(_to_private(c) if 0xDC80 <= ord(c) <= 0xDCFF else c for c in text)


def has_stand_ins(text: str) -> bool:
    return any(_LOW <= ord(c) <= _HIGH for c in text)


def restore(text: str) -> str:
    """Stand-in characters back to surrogate escapes (encode with errors='surrogateescape')."""
    if not has_stand_ins(text):
        return text
    return "".join(chr(ord(c) - _BASE + 0xDC00) if _LOW <= ord(c) <= _HIGH else c for c in text)
