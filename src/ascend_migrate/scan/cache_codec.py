"""The scan cache's file format: JSON of plain values, decoded into a closed set of dataclasses.

The cache folder may be shared (a CI cache restored from another job, a home folder on a
shared machine), so whoever can write there must not be able to make a scan run code. A
pickle would; this format cannot: the reader only builds the dataclasses listed in
`_CLASSES`, checks every field's type against the class's annotations, and anything else
(unknown tag, wrong arity, wrong type, bad JSON) makes the whole index a cache miss.

Encoding, one tag per non-JSON value so the round trip is exact (frozen dataclasses keep
their tuples, so they stay hashable):

    dataclass -> {"\\u0000c": "Name", "v": [field values in declaration order]}
    tuple     -> {"\\u0000t": [items]}
    bytes     -> {"\\u0000b": "hex"}
    dict      -> {"\\u0000m": [[key, value], ...]}    (a key can never be mistaken for a tag)
"""
from __future__ import annotations

import dataclasses
import json
import typing
from typing import Any, Iterable

_CLS, _TUP, _BYT, _MAP = "\0c", "\0t", "\0b", "\0m"


class CacheFormatError(ValueError):
    """The file is not an index this version wrote: treated as a cache miss."""


def _allowed(hint: Any) -> tuple[type, ...]:
    """The runtime types a field annotated `hint` may hold (containers by their origin only)."""
    origin = typing.get_origin(hint)
    if origin is typing.Union:
        out: tuple[type, ...] = ()
        for arg in typing.get_args(hint):
            out += _allowed(arg)
        return out
    if hint is Any:
        return (object,)
    if origin is not None:
        return (origin,)
    if hint is type(None):
        return (type(None),)
    if isinstance(hint, type):
        return (hint,)
    return (object,)


class Codec:
    """Encoder and strict decoder for a fixed list of dataclasses (names must be unique)."""

    def __init__(self, classes: Iterable[type]) -> None:
        self._classes: dict[str, tuple[type, tuple[tuple[type, ...], ...]]] = {}
        for cls in classes:
            hints = typing.get_type_hints(cls)
            fields = [f for f in dataclasses.fields(cls) if f.init]
            self._classes[cls.__name__] = (cls, tuple(_allowed(hints[f.name]) for f in fields))
        self._names = {cls: name for name, (cls, _) in self._classes.items()}

    # ------------------------------------------------------------------ encode
    def _plain(self, value: Any) -> Any:
        if value is None or isinstance(value, (str, bool, int, float)):
            return value
        kind = type(value)
        name = self._names.get(kind)
        if name is not None:
            return {_CLS: name, "v": [self._plain(getattr(value, f.name))
                                      for f in dataclasses.fields(kind) if f.init]}
        if kind is tuple:
            return {_TUP: [self._plain(v) for v in value]}
        if kind is list:
            return [self._plain(v) for v in value]
        if kind is bytes:
            return {_BYT: value.hex()}
        if kind is dict:
            return {_MAP: [[self._plain(k), self._plain(v)] for k, v in value.items()]}
        raise TypeError(f"cannot store {kind.__name__} in the scan cache")

    def dumps(self, value: Any) -> bytes:
        """`value` as UTF-8 JSON (ASCII escapes keep lone surrogates from stray bytes intact)."""
        return json.dumps(self._plain(value), separators=(",", ":"), ensure_ascii=True).encode("ascii")

    # ------------------------------------------------------------------ decode
    def _hook(self, obj: dict) -> Any:
        if len(obj) == 1:
            if _TUP in obj:
                items = obj[_TUP]
                if type(items) is not list:
                    raise CacheFormatError("tuple")
                return tuple(items)
            if _BYT in obj:
                try:
                    return bytes.fromhex(obj[_BYT])
                except (TypeError, ValueError) as exc:
                    raise CacheFormatError("bytes") from exc
            if _MAP in obj:
                pairs = obj[_MAP]
                if type(pairs) is not list or not all(type(p) is list and len(p) == 2 for p in pairs):
                    raise CacheFormatError("map")
                try:
                    return {k: v for k, v in pairs}
                except TypeError as exc:  # an unhashable key
                    raise CacheFormatError("map key") from exc
        elif len(obj) == 2 and _CLS in obj:
            entry = self._classes.get(obj[_CLS]) if type(obj[_CLS]) is str else None
            values = obj.get("v")
            if entry is None or type(values) is not list or len(values) != len(entry[1]):
                raise CacheFormatError(f"class {obj[_CLS]!r}")
            cls, types = entry
            for value, allowed in zip(values, types):
                if not isinstance(value, allowed):
                    raise CacheFormatError(f"{cls.__name__} field type")
            return cls(*values)
        raise CacheFormatError("untagged object")

    def loads(self, data: bytes) -> Any:
        """The value `dumps` wrote; CacheFormatError for anything else."""
        try:
            return json.loads(data, object_hook=self._hook)
        except CacheFormatError:
            raise
        except (ValueError, TypeError, RecursionError) as exc:
            raise CacheFormatError(str(exc)[:200]) from exc
