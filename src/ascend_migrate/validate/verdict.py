"""The one verdict rule, shared by `validate`, the report renderers and the skill generator.

An item blocks the verdict when its severity is `error` and its status is `fail` or
`manual-pending`. Warning items never block; a failed or undecided warning stays listed as an
open warning. Confirmation rules (validate/confirmations.py):

* only an item the checklist defines as `manual` (a question no tool can answer) can be
  confirmed, by a person, with a written reason; the confirmation is bound to the tree hash and
  the host and dropped when either differs;
* an automatic item (static or dynamic) is cleared by evidence alone: failed, undecided or not
  run, it stays as it is, with the reason and what would produce the evidence.

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
            what = ("failed" if status == "fail" else
                    "awaits a person's decision (manual item)" if item.get("kind") == "manual" else "undecided")
            reasons.append(f"{item['id']} {what}{summary}")
        else:
            what = "failed" if status == "fail" else "undecided"
            accept = " (manual item: a person may accept it)" if item.get("kind") == "manual" else ""
            warnings.append(f"{item['id']} {what}{summary}{accept}")
    return Decision("fail" if reasons else "pass", reasons, warnings)


def can_confirm(kind: str, status: str) -> Optional[str]:
    """None when an item of this kind in this state may be confirmed, else why not."""
    if kind != "manual":
        return ("only evidence clears an automatic item: fix what it reports, or produce the evidence "
                "it names, and validate again")
    if status not in BLOCKING:
        return f"nothing to confirm: the item is {status}"
    return None


def apply_confirmation(item: dict[str, Any], confirmation: dict[str, Any]) -> bool:
    """Mark `item` confirmed when the rules allow it; return whether it was applied."""
    if can_confirm(item.get("kind", ""), item.get("status", "")) is not None:
        return False
    previous = item["status"]
    note = confirmation.get("note") or ""
    item["status"] = "confirmed"
    item["confirmed"] = {"at": confirmation.get("at"), "note": note, "was": previous}
    item.setdefault("evidence", []).insert(
        0, {"message": f"confirmed at {confirmation.get('at')}" + (f": {note}" if note else "") + f" (was {previous})"})
    item["summary"] = f"confirmed: {note}" if note else "confirmed"
    return True
