"""Result model of `ascend-migrate check`: stages and the report."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

SCHEMA_VERSION = 1
STATUSES = ("ok", "warn", "fail", "skip")


@dataclass
class Stage:
    """One check. `found` says what was seen; `cause` and `fix` are set when not ok."""

    id: str
    title: str
    status: str
    found: str
    cause: str = ""
    fix: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    diagnosis: Optional[str] = None  # failure-signature id when the cause came from one

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"bad status {self.status!r}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "status": self.status,
            "found": self.found,
            "cause": self.cause,
            "fix": self.fix,
            "diagnosis": self.diagnosis,
            "details": self.details,
        }


def ok(id: str, title: str, found: str, **details: Any) -> Stage:
    return Stage(id, title, "ok", found, details=details)


def skip(id: str, title: str, why: str, **details: Any) -> Stage:
    return Stage(id, title, "skip", why, details=details)


def warn(id: str, title: str, found: str, cause: str, fix: str, **details: Any) -> Stage:
    return Stage(id, title, "warn", found, cause, fix, details=details)


def fail(id: str, title: str, found: str, cause: str, fix: str, **details: Any) -> Stage:
    return Stage(id, title, "fail", found, cause, fix, details=details)


@dataclass
class Report:
    device: str
    python: str
    stages: list[Stage]
    summary: str
    no_npu_stack: bool = False
    elapsed_s: float = 0.0

    @property
    def counts(self) -> dict[str, int]:
        return {s: sum(1 for st in self.stages if st.status == s) for s in STATUSES}

    @property
    def verdict(self) -> str:
        c = self.counts
        return "fail" if c["fail"] else ("warn" if c["warn"] else "ok")

    @property
    def exit_code(self) -> int:
        return 1 if self.counts["fail"] else 0

    def stage(self, stage_id: str) -> Stage:
        for st in self.stages:
            if st.id == stage_id:
                return st
        raise KeyError(stage_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "device": self.device,
            "python": self.python,
            "verdict": self.verdict,
            "summary": self.summary,
            "no_npu_stack": self.no_npu_stack,
            "counts": self.counts,
            "elapsed_s": round(self.elapsed_s, 3),
            "stages": [s.to_dict() for s in self.stages],
        }
