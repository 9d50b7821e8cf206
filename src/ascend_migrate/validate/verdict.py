"""The one verdict rule, shared by `validate`, the report renderers and the skill generator.

An item blocks the verdict when its severity is `error` and its status is `fail` or
`manual-pending`. Warning items never block; a failed or undecided warning stays listed as an
open warning until it is confirmed with a recorded reason. Confirmation rules:

* an undecided item (`manual-pending`, any severity) can be confirmed: a person or agent
  decided it and says why;
* a failed `warning` item can be confirmed with a reason (a known, accepted deviation);
* a failed `error` item cannot be confirmed: it must be fixed.

Everything that shows a verdict computes it with `decide()` from the items, so the
validator, the Markdown report and the generator cannot disagree.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

BLOCKING = ("fail", "manual-pending")


@dataclass
class Decision:
    verdict: str  # "pass" | "fail"
    reasons: list[str] = field(default_factory=list)  # why it fails (blocking items)
    open_warnings: list[str] = field(default_factory=list)  # warning items failed/undecided, not confirmed


def decide(items: Iterable[dict[str, Any]]) -> Decision:
    reasons: list[str] = []
    warnings: list[str] = []
    for item in items:
        status = item.get("status")
        if status not in BLOCKING:
            continue
        summary = f": {item['summary']}" if item.get("summary") else ""
        if item.get("severity") == "error":
            what = "failed" if status == "fail" else f"awaits confirmation (--confirm {item['id']} --note REASON)"
            reasons.append(f"{item['id']} {what}{summary}")
        else:
            what = "failed" if status == "fail" else "undecided"
            warnings.append(f"{item['id']} {what}{summary} (accept it with --confirm {item['id']} --note REASON)")
    return Decision("fail" if reasons else "pass", reasons, warnings)


def can_confirm(severity: str, status: str) -> Optional[str]:
    """None when an item in this state may be confirmed, else why not (and what to do)."""
    if status == "manual-pending":
        return None
    if status == "fail":
        if severity == "warning":
            return None
        return "it is an error item that failed; error items cannot be confirmed, fix the cause and re-run validate"
    return None  # pass / skip / confirmed: a recorded confirmation is harmless and not applied


def apply_confirmation(item: dict[str, Any], confirmation: dict[str, Any]) -> bool:
    """Mark `item` confirmed when the rules allow it; return whether it was applied."""
    if item.get("status") not in BLOCKING or can_confirm(item.get("severity", ""), item["status"]) is not None:
        return False
    previous = item["status"]
    note = confirmation.get("note") or ""
    item["status"] = "confirmed"
    item["confirmed"] = {"at": confirmation.get("at"), "note": note, "was": previous}
    item.setdefault("evidence", []).insert(
        0, {"message": f"confirmed at {confirmation.get('at')}" + (f": {note}" if note else "") + f" (was {previous})"})
    item["summary"] = f"confirmed: {note}" if note else "confirmed"
    return True
