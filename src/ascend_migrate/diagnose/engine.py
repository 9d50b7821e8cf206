"""Match a log or traceback against the failure knowledge base. Pure functions."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from ascend_migrate.diagnose.kb import CONFIDENCE_RANK, KnowledgeBase, Signature, default_kb

SCHEMA_VERSION = 1
NEAR_WINDOW = 6
MAX_LINE_CHARS = 400
ERR_CODE_ID = "torch-npu-err-code"

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
# "ERR00100 PTA call acl api failed": submodule 2 digits + code 3 digits.
_ERR_RE = re.compile(r"\bERR(\d{2})(\d{3})\b")


@dataclass
class Match:
    id: str
    title: str
    category: str
    severity: str
    confidence: str
    cause: str
    fix: str
    line_no: int  # 1-based line of the first occurrence
    line: str  # that line, stripped and clipped
    count: int = 1  # occurrences in the log
    decoded: Optional[dict[str, Any]] = None  # ERR code details
    other_lines: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "title": self.title,
            "category": self.category,
            "severity": self.severity,
            "confidence": self.confidence,
            "cause": self.cause,
            "fix": self.fix,
            "line_no": self.line_no,
            "line": self.line,
            "count": self.count,
        }
        if self.decoded is not None:
            out["decoded"] = self.decoded
        return out


def clean_lines(text: str) -> list[str]:
    """Split a log into lines, dropping ANSI colour codes and carriage-return overdraws."""
    text = _ANSI_RE.sub("", text)
    lines = []
    for raw in text.split("\n"):
        # progress bars rewrite a line with \r: keep what was printed last
        if "\r" in raw:
            raw = raw.rsplit("\r", 1)[-1] or raw.replace("\r", "")
        lines.append(raw)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _clip(line: str) -> str:
    line = line.strip()
    if len(line) > MAX_LINE_CHARS:
        return line[: MAX_LINE_CHARS - 3] + "..."
    return line


def _near_ok(sig: Signature, lines: list[str], idx: int) -> bool:
    if sig.near is None:
        return True
    lo, hi = max(0, idx - NEAR_WINDOW), min(len(lines), idx + NEAR_WINDOW + 1)
    return any(sig.near.search(lines[j]) for j in range(lo, hi))


def decode_err_code(code: str, kb: Optional[KnowledgeBase] = None) -> Optional[dict[str, Any]]:
    """Decode a torch_npu error code like 'ERR00100' into module and meaning."""
    kb = kb or default_kb()
    m = _ERR_RE.search(code)
    if not m:
        return None
    mod, num = m.group(1), m.group(2)
    module = kb.err_modules.get(mod)
    entry = kb.err_codes.get(num)
    return {
        "code": f"ERR{mod}{num}",
        "module": module.name if module else f"unknown module {mod}",
        "module_meaning": module.meaning if module else "",
        "error": entry.name if entry else f"unknown code {num}",
        "meaning": entry.meaning if entry else "",
        "fix": entry.fix if entry else "",
    }


def diagnose_lines(lines: list[str], kb: Optional[KnowledgeBase] = None) -> list[Match]:
    """All signatures found in `lines`, in order of first appearance."""
    kb = kb or default_kb()
    found: dict[str, Match] = {}
    for idx, line in enumerate(lines):
        if not line.strip():
            continue
        on_line: list[Signature] = []
        for sig in kb.signatures:
            if any(p.search(line) for p in sig.patterns) and _near_ok(sig, lines, idx):
                on_line.append(sig)
        hidden = {h for sig in on_line for h in sig.supersedes}
        for sig in on_line:
            if sig.id in hidden:
                continue
            prev = found.get(sig.id)
            if prev is None:
                found[sig.id] = Match(
                    id=sig.id,
                    title=sig.title,
                    category=sig.category,
                    severity=sig.severity,
                    confidence=sig.confidence,
                    cause=sig.cause,
                    fix=sig.fix,
                    line_no=idx + 1,
                    line=_clip(line),
                )
            else:
                prev.count += 1
                prev.other_lines.append(idx + 1)
        for m in _ERR_RE.finditer(line):
            decoded = decode_err_code(m.group(0), kb)
            key = f"{ERR_CODE_ID}:{decoded['code']}"
            if key in found:
                found[key].count += 1
                continue
            found[key] = Match(
                id=ERR_CODE_ID,
                title=f"torch_npu error {decoded['code']}: {decoded['module']} {decoded['error']}",
                category="device",
                severity="error",
                confidence="medium" if decoded["meaning"] else "low",
                cause=f"{decoded['module_meaning'] or decoded['module']}: {decoded['meaning'] or 'code not in the table'}.",
                fix=decoded["fix"] or "Read the error text before the code.",
                line_no=idx + 1,
                line=_clip(line),
                decoded=decoded,
            )
    return sorted(found.values(), key=lambda m: (m.line_no, -CONFIDENCE_RANK[m.confidence]))


def diagnose_text(text: str, kb: Optional[KnowledgeBase] = None) -> list[Match]:
    return diagnose_lines(clean_lines(text), kb)


def primary(matches: Iterable[Match]) -> Optional[Match]:
    """The most likely root cause: the earliest error of the highest confidence.

    Earlier lines win because the first error in a log is usually the cause and later
    ones its consequences (a collective timeout after a crash on another rank, say).
    """
    errors = [m for m in matches if m.severity == "error"] or list(matches)
    if not errors:
        return None
    best = max(CONFIDENCE_RANK[m.confidence] for m in errors)
    return min((m for m in errors if CONFIDENCE_RANK[m.confidence] == best), key=lambda m: m.line_no)


def report_dict(matches: list[Match], source: str, n_lines: int) -> dict[str, Any]:
    top = primary(matches)
    return {
        "schema_version": SCHEMA_VERSION,
        "source": source,
        "lines": n_lines,
        "primary": top.id if top else None,
        "matches": [m.to_dict() for m in matches],
    }
