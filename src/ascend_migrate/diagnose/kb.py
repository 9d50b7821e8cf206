"""The failure-signature knowledge base (knowledge/failures.yaml), loaded and checked."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from ascend_migrate.knowledge.loader import (
    DATA_DIR,
    Field,
    KnowledgeError,
    check_record,
    iter_records,
    load_yaml,
)

FAILURES_FILE = DATA_DIR / "failures.yaml"

CATEGORIES = (
    "environment",
    "install",
    "import",
    "build",
    "distributed",
    "memory",
    "operator",
    "dtype",
    "device",
    "code",
    "performance",
)
SEVERITIES = ("error", "warning", "info")
# cause: the failure itself; symptom: what other failures look like from here (a timeout on a
# healthy rank, a wrapper error). A cause ranks above a symptom of the same confidence.
ROLES = ("cause", "symptom")
FAMILIES = (
    "libraries-and-env",
    "versions",
    "operators",
    "devices",
    "memory",
    "distributed",
    "kernel-faults",
    "ported-code",
    "build",
    "dtypes",
    "own-tools",
    "performance",
)
CONFIDENCES = ("high", "medium", "low")
CONFIDENCE_RANK = {"high": 3, "medium": 2, "low": 1}
_ID_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

_SIGNATURE_FIELDS = (
    Field("id"),
    Field("title"),
    Field("category", choices=CATEGORIES),
    Field("severity", choices=SEVERITIES),
    Field("confidence", choices=CONFIDENCES),
    Field("patterns", (list,)),
    Field("near", required=False),
    Field("supersedes", (list,), required=False, default=[]),
    Field("follows", (list,), required=False, default=[]),
    Field("unless", required=False),
    Field("family", choices=FAMILIES, required=False),
    Field("role", choices=ROLES, required=False, default="cause"),
    Field("cause"),
    Field("fix"),
    Field("confirm", required=False, default=""),
    Field("lookup", required=False),
    Field("example"),
    Field("sources", (list,)),
)
_ERR_MODULE_FIELDS = (Field("name"), Field("meaning"))
_ERR_CODE_FIELDS = (Field("name"), Field("meaning"), Field("fix"))


@dataclass(frozen=True)
class Signature:
    id: str
    title: str
    category: str
    severity: str
    confidence: str
    patterns: tuple[re.Pattern[str], ...]
    near: Optional[re.Pattern[str]]
    supersedes: tuple[str, ...]
    cause: str
    fix: str
    example: str
    sources: tuple[str, ...]
    unless: Optional[re.Pattern[str]] = None
    family: str = "libraries-and-env"
    role: str = "cause"
    confirm: str = ""
    lookup: Optional[str] = None
    follows: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "category": self.category,
            "severity": self.severity,
            "confidence": self.confidence,
            "patterns": [WRITTEN.get(p.pattern, p.pattern) for p in self.patterns],
            "near": WRITTEN.get(self.near.pattern, self.near.pattern) if self.near else None,
            "unless": WRITTEN.get(self.unless.pattern, self.unless.pattern) if self.unless else None,
            "family": self.family,
            "role": self.role,
            "cause": self.cause,
            "fix": self.fix,
            "confirm": self.confirm,
            "sources": list(self.sources),
        }


@dataclass(frozen=True)
class ErrEntry:
    name: str
    meaning: str
    fix: str = ""


@dataclass(frozen=True)
class Library:
    """An Ascend shared library: which package ships it and where it lives."""

    name: str
    package: str
    path: str


@dataclass(frozen=True)
class KnowledgeBase:
    signatures: tuple[Signature, ...]
    err_modules: dict[str, ErrEntry]
    err_codes: dict[str, ErrEntry]
    libraries: tuple[Library, ...] = ()
    anchors: tuple[str, ...] = ()

    def library(self, filename: str) -> Optional[Library]:
        """The known library whose name starts `filename` (libhccl.so.1 -> libhccl)."""
        best = None
        for lib in self.libraries:
            if filename == lib.name or filename.startswith(lib.name + ".") or filename.startswith(lib.name + "-"):
                if best is None or len(lib.name) > len(best.name):
                    best = lib
        return best

    def get(self, sig_id: str) -> Signature:
        for sig in self.signatures:
            if sig.id == sig_id:
                return sig
        raise KeyError(sig_id)


_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")
# the pattern as written in failures.yaml, for each linear form compiled from it
WRITTEN: dict[str, str] = {}


def _top_level_split(pattern: str) -> Optional[list[str]]:
    """`pattern` cut at every `.*` outside groups and classes; None when it has a top-level
    alternation (then no cut is sound)."""
    parts, start, depth, i, in_class = [], 0, 0, 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]" or pattern[i - 1] == "["
        elif c == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "^":
                i += 1
            if pattern[i + 1:i + 2] == "]":
                i += 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and c == "|":
            return None
        elif depth == 0 and pattern.startswith(".*", i) and pattern[i + 2:i + 3] not in ("?", "+"):
            parts.append(pattern[start:i])
            start = i + 2
            i += 2
            continue
        i += 1
    parts.append(pattern[start:])
    return parts


def _uncaptured(segment: str) -> str:
    """`segment` with its groups made non-capturing (for a copy inside a lookahead)."""
    out, i, in_class = [], 0, False
    while i < len(segment):
        c = segment[i]
        if c == "\\":
            out.append(segment[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            m = re.match(r"\(\?P<\w+>", segment[i:])
            if m:
                out.append("(?:")
                i += len(m.group(0))
                continue
            if segment[i + 1:i + 2] != "?":
                out.append("(?:")
                i += 1
                continue
        out.append(c)
        i += 1
    return "".join(out)


def linear_form(pattern: str) -> str:
    """A pattern that matches the same lines as `A.*B.*C` in time linear in the line length.

    `A.*B` searched on a line with many A and no B restarts at every A and runs to the end of the
    line each time (quadratic). Some A followed by some B exists exactly when the first A is
    followed by a B, so the linear form anchors at the line start, skips to the first A with a
    tempered dot (`(?:(?!A).)*`, which cannot step over an A), and does the same for each later
    part. The match starts at the line start; the group `_sig` holds what the written pattern
    would have matched from (the same first A). Patterns without a top-level `.*` are kept.
    """
    flags = ""
    m = _FLAGS.match(pattern)
    if m:
        flags, pattern = m.group(0), pattern[m.end():]
    parts = _top_level_split(pattern)
    if parts is None or len(parts) < 2 or "(?P<_sig>" in pattern:
        return flags + pattern
    out = [flags + "^"]
    for j, part in enumerate(parts):
        if not part:
            out.append(".*" if j == len(parts) - 1 else "")
            continue
        out.append(f"(?:(?!{_uncaptured(part)}).)*" + ("(?P<_sig>" if j == 0 else "") + part)
    if parts[0]:
        out.append(")")
    return "".join(out)


def _compile(file: Path, where: str, pattern: Any) -> re.Pattern[str]:
    if not isinstance(pattern, str) or not pattern:
        raise KnowledgeError(file, where, "expected a non-empty regex string")
    try:
        re.compile(pattern)
        linear = linear_form(pattern)
        WRITTEN[linear] = pattern
        return re.compile(linear)
    except re.error as exc:
        raise KnowledgeError(file, where, f"invalid regex: {exc}") from exc


def _str_list(file: Path, where: str, value: list) -> tuple[str, ...]:
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise KnowledgeError(file, f"{where}[{i}]", "expected a non-empty string")
    return tuple(value)


def _err_table(data: Any, file: Path, key: str, width: int, fields) -> dict[str, ErrEntry]:
    table = data.get(key) if isinstance(data, dict) else None
    if not isinstance(table, dict) or not table:
        raise KnowledgeError(file, key, "missing or not a mapping")
    out: dict[str, ErrEntry] = {}
    for code, rec in table.items():
        code = str(code)
        if not (code.isdigit() and len(code) == width):
            raise KnowledgeError(file, f"{key}.{code}", f"expected a {width}-digit string key")
        checked = check_record(rec, fields, file, f"{key}.{code}")
        out[code] = ErrEntry(**checked)
    return out


def load_kb(path: Path | str = FAILURES_FILE) -> KnowledgeBase:
    """Load and check a failures file. Malformed data raises one KnowledgeError."""
    path = Path(path)
    data = load_yaml(path)
    signatures: list[Signature] = []
    for label, r in iter_records(data, path, "signatures", _SIGNATURE_FIELDS):
        if not _ID_RE.match(r["id"]):
            raise KnowledgeError(path, f"{label}.id", "must be lowercase words joined by dashes")
        if not r["patterns"]:
            raise KnowledgeError(path, f"{label}.patterns", "needs at least one pattern")
        patterns = tuple(
            _compile(path, f"{label}.patterns[{j}]", p) for j, p in enumerate(r["patterns"])
        )
        near = _compile(path, f"{label}.near", r["near"]) if r["near"] is not None else None
        signatures.append(
            Signature(
                id=r["id"],
                title=r["title"].strip(),
                category=r["category"],
                severity=r["severity"],
                confidence=r["confidence"],
                patterns=patterns,
                near=near,
                supersedes=_str_list(path, f"{label}.supersedes", r["supersedes"] or []),
                cause=" ".join(r["cause"].split()),
                fix=" ".join(r["fix"].split()),
                example=r["example"],
                sources=_str_list(path, f"{label}.sources", r["sources"]),
                unless=_compile(path, f"{label}.unless", r["unless"]) if r["unless"] is not None else None,
                family=r["family"] or _DEFAULT_FAMILY.get(r["category"], "libraries-and-env"),
                role=r["role"],
                confirm=" ".join(r["confirm"].split()),
                lookup=r["lookup"],
                follows=_str_list(path, f"{label}.follows", r["follows"] or []),
            )
        )
    seen = {sig.id for sig in signatures}
    for sig in signatures:
        for other in sig.supersedes:
            if other not in seen:
                raise KnowledgeError(path, f"{sig.id}.supersedes", f"unknown id {other!r}")
    for sig in signatures:
        for fam in sig.follows:
            if fam not in FAMILIES:
                raise KnowledgeError(path, f"{sig.id}.follows", f"unknown family {fam!r}")
    libraries = _libraries(data, path)
    for sig in signatures:
        if sig.lookup not in (None, "libraries"):
            raise KnowledgeError(path, f"{sig.id}.lookup", "the only lookup table is 'libraries'")
    from ascend_migrate.diagnose.prefilter import build_anchors

    anchors = build_anchors(signatures, _str_list(path, "prefilter_anchors", data.get("prefilter_anchors") or []), path)
    return KnowledgeBase(
        signatures=tuple(signatures),
        err_modules=_err_table(data, path, "err_code_modules", 2, _ERR_MODULE_FIELDS),
        err_codes=_err_table(data, path, "err_codes", 3, _ERR_CODE_FIELDS),
        libraries=libraries,
        anchors=anchors,
    )


_LIB_FIELDS = (Field("package"), Field("path"))


def _libraries(data: Any, file: Path) -> tuple[Library, ...]:
    table = data.get("ascend_libraries") if isinstance(data, dict) else None
    if table is None:
        return ()
    if not isinstance(table, dict):
        raise KnowledgeError(file, "ascend_libraries", "expected a mapping of library name to package and path")
    out = []
    for name, rec in table.items():
        checked = check_record(rec, _LIB_FIELDS, file, f"ascend_libraries.{name}")
        out.append(Library(name=str(name), package=checked["package"], path=checked["path"]))
    return tuple(out)


_DEFAULT_FAMILY = {
    "environment": "libraries-and-env",
    "install": "versions",
    "import": "libraries-and-env",
    "build": "build",
    "distributed": "distributed",
    "memory": "memory",
    "operator": "operators",
    "dtype": "dtypes",
    "device": "devices",
    "code": "ported-code",
    "performance": "performance",
}


@lru_cache(maxsize=1)
def default_kb() -> KnowledgeBase:
    return load_kb(FAILURES_FILE)
