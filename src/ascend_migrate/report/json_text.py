"""Indented JSON text, byte for byte what `json.dumps(obj, indent=2, ensure_ascii=False)` writes,
in about half the time.

With an indent the standard library encodes in pure Python through a chain of generators, one
`yield` per token; a scan report of thousands of findings spends most of its rendering there.
This writer walks the same data once, appending to a list, and leaves every string to the
standard library's C escaper (`json.encoder.encode_basestring`), so strings, numbers and
separators come out as `json.dumps` writes them. Anything but dicts, lists, tuples, strings,
numbers, booleans and None goes to `json.dumps` itself (which decides whether it can be encoded).
`tests/report/test_json_text.py` checks the equality on generated data.
"""
from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any

INDENT = "  "
_INF = float("inf")


def dumps(obj: Any, level: int = 0) -> str:
    """`json.dumps(obj, indent=2, ensure_ascii=False)`, as if `obj` sat `level` levels deep in
    a larger document (each line break followed by `level` more indents)."""
    out: list[str] = []
    try:
        _encode(obj, out, "\n" + INDENT * level)
    except (TypeError, ValueError, RecursionError):  # what json.dumps decides for itself
        text = json.dumps(obj, indent=2, ensure_ascii=False)
        return text.replace("\n", "\n" + INDENT * level) if level else text
    return "".join(out)


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == _INF:
        return "Infinity"
    if value == -_INF:
        return "-Infinity"
    return float.__repr__(value)


def _key(key: Any) -> str:
    """A dict key as `json.dumps` turns it into a string."""
    kind = type(key)
    if kind is str:
        return key
    if kind is float:
        return _float(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if kind is int:
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {kind.__name__}")


def _encode(obj: Any, out: list[str], newline: str, escape: Any = encode_basestring) -> None:
    kind = type(obj)
    if kind is str:
        out.append(escape(obj))
    elif kind is dict:
        if not obj:
            out.append("{}")
            return
        inner = newline + INDENT
        separator = "{" + inner
        for key, value in obj.items():
            out.append(separator)
            out.append(escape(key if type(key) is str else _key(key)))
            out.append(": ")
            _encode(value, out, inner)
            separator = "," + inner
        out.append(newline + "}")
    elif kind is list or kind is tuple:
        if not obj:
            out.append("[]")
            return
        inner = newline + INDENT
        separator = "[" + inner
        for value in obj:
            out.append(separator)
            _encode(value, out, inner)
            separator = "," + inner
        out.append(newline + "]")
    elif obj is None:
        out.append("null")
    elif obj is True:
        out.append("true")
    elif obj is False:
        out.append("false")
    elif kind is int:
        out.append(int.__repr__(obj))
    elif kind is float:
        out.append(_float(obj))
    else:
        raise TypeError(f"not a plain JSON value: {kind.__name__}")
