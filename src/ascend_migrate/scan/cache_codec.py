"""The scan cache's file format: JSON of plain values, decoded into a closed set of dataclasses.

The cache folder may be shared (a CI cache restored from another job, a home folder on a
shared machine), so whoever can write there must not be able to make a scan run code. A
pickle would; this format cannot: the reader only builds the dataclasses it was given,
checks each field against the class's annotations (turning JSON arrays back into the tuples
the annotations name, so frozen dataclasses stay hashable), and anything else (unknown class,
wrong arity, wrong type, bad JSON) makes the whole index a cache miss.

    dataclass -> {"\\u0000c": "Name", "v": [init field values in declaration order]}
    bytes     -> {"\\u0000b": "hex"}

Plain dicts are written as they are: their keys (relative paths, framework names) never hold
a NUL, so they cannot be taken for a tag.
"""
from __future__ import annotations

import dataclasses
import json
import typing
from typing import Any, Callable, Iterable, Optional

_CLS, _BYT = "\0c", "\0b"

Convert = Callable[[Any], Any]


class CacheFormatError(ValueError):
    """The file is not an index this version wrote: treated as a cache miss."""


def _field(hint: Any) -> tuple[tuple[type, ...], Optional[Convert]]:
    """The JSON types a field annotated `hint` may arrive as, and how to turn that back into
    the annotated value (None: as it is)."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Union:
        allowed: tuple[type, ...] = ()
        converts = []
        for arg in args:
            kinds, conv = _field(arg)
            allowed += kinds
            if conv is not None:
                converts.append((kinds, conv))
        if not converts:
            return allowed, None

        def union(v: Any) -> Any:
            for kinds, conv in converts:
                if isinstance(v, kinds):
                    return conv(v)
            return v
        return allowed, union
    if hint is tuple or origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _item(args[0])
            return (list,), lambda v: tuple(item(i) for i in v)
        if args:
            items = [_item(a) for a in args]

            def fixed(v: Any) -> tuple:
                if len(v) != len(items):
                    raise CacheFormatError("tuple length")
                return tuple(c(i) for c, i in zip(items, v))
            return (list,), fixed
        return (list,), tuple
    if origin in (list, typing.Sequence) or str(origin) == "<class 'collections.abc.Sequence'>":
        if args:
            item = _item(args[0])
            return (list,), lambda v: [item(i) for i in v]
        return (list,), None
    if origin is not None:
        return (origin,), None
    if hint is Any:
        return (object,), None
    if hint is type(None):
        return (type(None),), None
    if isinstance(hint, type):
        return (hint,), None
    return (object,), None


def _item(hint: Any) -> Convert:
    """Check (and convert) one element of a list or tuple field."""
    allowed, convert = _field(hint)

    def item(v: Any) -> Any:
        if not isinstance(v, allowed):
            raise CacheFormatError("element type")
        return convert(v) if convert is not None else v
    return item


class Codec:
    """Encoder and strict decoder for a fixed list of dataclasses (names must be unique)."""

    def __init__(self, classes: Iterable[type]) -> None:
        self._classes: dict[str, tuple[type, tuple[tuple[tuple[type, ...], Optional[Convert]], ...]]] = {}
        self._names: dict[type, tuple[str, tuple[str, ...]]] = {}
        for cls in classes:
            hints = typing.get_type_hints(cls)
            fields = [f for f in dataclasses.fields(cls) if f.init]
            self._classes[cls.__name__] = (cls, tuple(_field(hints[f.name]) for f in fields))
            self._names[cls] = (cls.__name__, tuple(f.name for f in fields))

    def _default(self, value: Any) -> Any:
        entry = self._names.get(type(value))
        if entry is not None:
            return {_CLS: entry[0], "v": [getattr(value, n) for n in entry[1]]}
        if type(value) is bytes:
            return {_BYT: value.hex()}
        raise TypeError(f"cannot store {type(value).__name__} in the scan cache")

    def dumps(self, value: Any) -> bytes:
        """`value` as JSON (ASCII escapes keep lone surrogates from stray bytes intact)."""
        return json.dumps(value, default=self._default, separators=(",", ":"),
                          ensure_ascii=True, check_circular=False).encode("ascii")

    def _hook(self, obj: dict) -> Any:
        if _CLS in obj:
            name = obj[_CLS]
            entry = self._classes.get(name) if type(name) is str else None
            values = obj.get("v")
            if entry is None or len(obj) != 2 or type(values) is not list or len(values) != len(entry[1]):
                raise CacheFormatError(f"class {name!r}")
            cls, fields = entry
            out = []
            for value, (allowed, convert) in zip(values, fields):
                if not isinstance(value, allowed):
                    raise CacheFormatError(f"{cls.__name__}: field type")
                out.append(convert(value) if convert is not None else value)
            return cls(*out)
        if _BYT in obj:
            try:
                if len(obj) != 1:
                    raise ValueError
                return bytes.fromhex(obj[_BYT])
            except (TypeError, ValueError) as exc:
                raise CacheFormatError("bytes") from exc
        return obj

    def loads(self, data: bytes) -> Any:
        """The value `dumps` wrote; CacheFormatError for anything else."""
        try:
            return json.loads(data, object_hook=self._hook)
        except CacheFormatError:
            raise
        except (ValueError, TypeError, RecursionError) as exc:
            raise CacheFormatError(str(exc)[:200]) from exc
