"""Loading knowledge-base YAML with a checked schema.

Every data file in the knowledge base (rules, failure signatures, checklists, compatibility
tables) goes through `load_yaml` and `check_record`, so a malformed file always fails the
same way: one `KnowledgeError` naming the file, the key and the reason.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Optional, Sequence

import yaml

DATA_DIR = Path(__file__).resolve().parent


class KnowledgeError(ValueError):
    """A knowledge-base file is malformed. str() is 'file: key: reason'."""

    def __init__(self, file: Path | str, key: str, reason: str) -> None:
        self.file = str(file)
        self.key = key
        self.reason = reason
        super().__init__(f"{self.file}: {key}: {reason}")


def read_text(path: Path) -> str:
    """A knowledge file's text; unreadable or non-UTF-8 files become a KnowledgeError."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise KnowledgeError(path, "<file>", f"cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise KnowledgeError(path, "<file>", f"not UTF-8: {exc.reason}") from exc


# libyaml's loader when pyyaml was built with it: the knowledge base is parsed on every run,
# and the pure-Python parser spent about half of a warm re-scan's time on it. Both resolve
# the same safe tag set; a test checks they give the same data for every knowledge file.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(path: Path | str, loader: Any = None) -> Any:
    """Parse one YAML file; syntax errors become a KnowledgeError with the line number."""
    path = Path(path)
    text = read_text(path)
    try:
        return yaml.load(text, Loader=loader or SAFE_LOADER)  # noqa: S506 (a safe loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "<yaml>"
        problem = getattr(exc, "problem", None) or str(exc)
        raise KnowledgeError(path, where, f"invalid YAML: {problem}") from exc


@dataclass(frozen=True)
class Field:
    """One key of a record: its type(s), whether it must be present, allowed values."""

    name: str
    types: tuple[type, ...] = (str,)
    required: bool = True
    choices: Optional[Sequence[Any]] = None
    default: Any = None


def _type_names(types: Iterable[type]) -> str:
    return " or ".join(t.__name__ for t in types)


def check_record(
    record: Any,
    fields: Sequence[Field],
    file: Path | str,
    where: str,
    allow_extra: bool = False,
) -> dict[str, Any]:
    """Check one mapping against `fields`; return it with defaults filled in.

    `where` names the record in errors, e.g. "rules[3] (CU101)".
    """
    if not isinstance(record, Mapping):
        raise KnowledgeError(file, where, f"expected a mapping, got {type(record).__name__}")
    known = {f.name for f in fields}
    if not allow_extra:
        for key in record:
            if key not in known:
                raise KnowledgeError(file, f"{where}.{key}", "unknown key")
    out: dict[str, Any] = {}
    for f in fields:
        if f.name not in record or record[f.name] is None:
            if f.required:
                raise KnowledgeError(file, f"{where}.{f.name}", "missing required key")
            out[f.name] = f.default
            continue
        value = record[f.name]
        # bool is a subclass of int: accept it only where bool is named.
        ok = isinstance(value, f.types) and (not isinstance(value, bool) or bool in f.types)
        if not ok:
            raise KnowledgeError(
                file,
                f"{where}.{f.name}",
                f"expected {_type_names(f.types)}, got {type(value).__name__}",
            )
        if f.choices is not None and value not in f.choices:
            allowed = ", ".join(map(str, f.choices))
            raise KnowledgeError(file, f"{where}.{f.name}", f"{value!r} is not one of: {allowed}")
        out[f.name] = value
    if allow_extra:
        for key, value in record.items():
            out.setdefault(key, value)
    return out


def expect_list(data: Any, file: Path | str, key: str) -> list:
    """The value at top-level `key` must be a list."""
    if not isinstance(data, Mapping):
        raise KnowledgeError(file, "<top>", f"expected a mapping with '{key}', got {type(data).__name__}")
    value = data.get(key)
    if not isinstance(value, list):
        raise KnowledgeError(file, key, "missing or not a list")
    return value


def iter_records(data: Any, file: Path | str, key: str, fields: Sequence[Field],
                 id_key: str = "id") -> Iterator[tuple[str, dict[str, Any]]]:
    """Check each record of the list at top-level `key`; yield (label, record).

    The label ("rules[3] (CU101)") names the record in errors, and ids must be unique.
    """
    seen: set[Any] = set()
    for index, raw in enumerate(expect_list(data, file, key)):
        label = f"{key}[{index}]"
        if isinstance(raw, Mapping) and isinstance(raw.get(id_key), str):
            label += f" ({raw[id_key]})"
        record = check_record(raw, fields, file, label)
        if id_key in record:
            if record[id_key] in seen:
                raise KnowledgeError(file, f"{label}.{id_key}", "duplicate id")
            seen.add(record[id_key])
        yield label, record
