"""Markdown scan report: summary tables, then every finding grouped by file.

`summary=True` gives the summary alone (counts, plans, coverage, rules, effort, top files,
entry points), bounded whatever the size of the tree: at most ENTRY_ROWS entry points and
rejected candidates each, the rest counted and left to the JSON report. It is the view an
agent or a reviewer reads before deciding how to port.

Rendered from the canonical JSON report with plain string building (GitHub-flavoured
Markdown tables; pipes and newlines in cell text are escaped). The report stands on its own
where it is read (the user's project, a CI artifact): each rule ID links to a "Rules"
section at the end that carries the rule's short guidance inline, not to a file of this
tool's checkout.
"""
from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

from ascend_migrate.knowledge.base import KnowledgeBase
from ascend_migrate.printable import printable_data
from ascend_migrate.report.json_report import as_report, plans_to_show, synced_note
from ascend_migrate.scan.api import ScanResult

TRANSFER_MEANING = {
    "auto": "handled by transfer_to_npu at run time",
    "partial": "mapped by transfer_to_npu, but behaves differently on NPU: check each",
    "none": "not handled by transfer_to_npu: needs a code change",
    "unknown": "rule not in this knowledge base",
}
ENTRY_ROWS = 25  # entry points (and rejected candidates) listed in the summary; the rest are counted


def to_markdown(
    result: "ScanResult | dict[str, Any]", kb: Optional[KnowledgeBase] = None, *, top: int = 10,
    summary: bool = False,
) -> str:
    """The whole report as one Markdown document, or (`summary`) its summary sections only."""
    report = printable_data(as_report(result, kb))  # names and texts from the tree, escaped
    counts = report["counts"]
    out: list[str] = ["# ascend-migrate scan report", ""]
    npu = (report["torch_npu_version"] or "none") + synced_note(report["torch_npu_version"])
    out.append(
        f"Root `{_code(report['root'])}` · {report['files_scanned']:,} files, {report['lines_scanned']:,} lines "
        f"scanned in {report['duration_s']:.2f} s · transfer_to_npu coverage of torch_npu {npu} · "
        f"{report['tool']['name']} {report['tool']['version']}"
    )
    out.append("")

    out += ["## Summary", ""]
    sev = counts["by_severity"]
    out += _table(
        ["Findings", "Errors", "Warnings", "Info", "Files with findings", "Estimated effort"],
        [[counts["findings"], sev["error"], sev["warning"], sev["info"], counts["files_with_findings"],
          f"{report['effort']['hours']:g} h"]],
    )

    plans = report.get("frameworks") or []
    if plans_to_show(plans):
        out += ["## Plan per framework", ""]
        for plan in plans:
            if not plan["findings"]:
                out += [f"### {_esc(plan['label'])} (first seen at `{_code(plan['first_seen'])}`)", "",
                        "No findings: nothing to port.", ""]
                continue
            sev = plan["by_severity"]
            out += [f"### {_esc(plan['label'])} (first seen at `{_code(plan['first_seen'])}`)", "",
                    f"{plan['findings']} findings ({sev.get('error', 0)} error, {sev.get('warning', 0)} warning, "
                    f"{sev.get('info', 0)} info). {_esc(plan['guidance'])}", ""]
            for b in plan["blockers"]:
                out.append(f"- **Blocker** `{_code(b['path'])}:{b['line']}` {b['rule']}: {_esc(b['message'])}")
            if plan["blockers"]:
                out.append("")
            out += [f"{i}. {_esc(step)}" for i, step in enumerate(plan["steps"], 1)] + [""]

    out += ["## transfer_to_npu coverage", ""]
    total = counts["findings"] or 1
    out += _table(
        ["Coverage", "Findings", "Share", "Meaning"],
        [[f"`{k}`", n, f"{100 * n / total:.0f}%", TRANSFER_MEANING.get(k, "")]
         for k, n in counts["by_transfer"].items() if n or k != "unknown"],
    )

    out += ["## By category", ""]
    rows = []
    for cat, n in sorted(counts["by_category"].items(), key=lambda kv: (-kv[1], kv[0])):
        s = counts["by_category_severity"][cat]
        rows.append([_esc(cat), n, s["error"], s["warning"], s["info"]])
    out += _table(["Category", "Findings", "Errors", "Warnings", "Info"], rows) if rows else ["No findings.", ""]

    out += ["## By rule", ""]
    rows = []
    for rid, n in sorted(counts["by_rule"].items(), key=lambda kv: (-kv[1], kv[0])):
        rule = report["rules"][rid]
        rows.append([_rule_link(rid), _esc(rule["name"]), _esc(rule["category"]), rule["severity"],
                     f"`{rule['transfer']}`", rule["effort"], n])
    out += (_table(["Rule", "Name", "Category", "Severity", "transfer_to_npu", "Effort", "Findings"], rows)
            if rows else ["No findings.", ""])

    out += ["## Effort estimate", ""]
    effort = report["effort"]
    rows = []
    for level, units in effort["units"].items():
        per = effort["minutes_per_unit"].get(level, 0)
        rows.append([level, counts["by_effort"].get(level, 0), units, per, units * per])
    rows.append(["**total**", counts["findings"], sum(effort["units"].values()), "",
                 f"**{effort['minutes']}** ({effort['hours']:g} h)"])
    out += _table(["Effort", "Findings", "Counted", "Minutes each", "Minutes"], rows)
    per_file = ", ".join(effort["per_file_rules"])
    out += [f"Counted: findings of {per_file} count once per file; every other finding counts once. "
            "A rough planning figure, not a quote.", ""]

    files = report["files"][:top]
    if files:
        out += [f"## Top files ({len(files)} of {len(report['files'])})", ""]
        out += _table(["File", "Findings", "Errors", "Warnings", "Info"],
                      [[f"`{_code(f['path'])}`", f["findings"], f["by_severity"]["error"],
                        f["by_severity"]["warning"], f["by_severity"]["info"]] for f in files])

    out += ["## Entry points", ""]
    entries = report["entry_points"]
    shown = entries[:ENTRY_ROWS] if summary else entries
    if entries:
        out += _table(
            ["File", "Line", "Kind", "transfer_to_npu imported", "torch_npu imported", "Why"],
            [[f"`{_code(e['path'])}`", e["line"], e["kind"], _yes(e["has_transfer_import"]),
              _yes(e["imports_torch_npu"]), _cell(e.get("reason", ""))] for e in shown],
        )
        out += _left_out(len(entries) - len(shown), "entry points", "entry_points")
    else:
        out += ["None found (no main block, module-level script code, console script, launch line or notebook "
                "that reaches torch).", ""]
    rejected = report.get("rejected_entry_points") or []
    if rejected:
        shown = rejected[:ENTRY_ROWS] if summary else rejected
        out += ["Not entry points (overrule with `--entry FILE`):", ""]
        out += _table(["File", "Why not"], [[f"`{_code(e['path'])}`", _cell(e.get("reason", ""))]
                                            for e in shown])
        out += _left_out(len(rejected) - len(shown), "candidates", "rejected_entry_points")

    if report["notes"]:
        notes = report["notes"][:top] if summary else report["notes"]
        out += ["## Files not fully scanned", ""]
        out += _table(["File", "Reason"], [[f"`{_code(n['path'])}`", _esc(n["reason"])] for n in notes])
        out += _left_out(len(report["notes"]) - len(notes), "files", "notes")

    if summary:
        out += [f"The {counts['findings']:,} findings themselves: `--format md` without `--summary`, or the "
                "JSON report (`--format json`).", ""]
        return "\n".join(out).rstrip("\n") + "\n"

    out += ["## Findings", ""]
    if not report["findings"]:
        out += ["No findings.", ""]
    for path, group in _by_file(report["findings"]):
        out += [f"### `{_code(path)}` ({len(group)})", ""]
        out += _table(["Line", "Rule", "Severity", "Message"],
                      [[f"{f['line']}:{f['col'] + 1}", _rule_link(f["rule"]), f["severity"],
                        _esc(f["message"])] for f in group])

    if report["rules"]:
        out += ["## Rules", ""]
        for rid in sorted(report["rules"]):
            out += _rule_section(report["rules"][rid])
    return "\n".join(out).rstrip("\n") + "\n"


def _left_out(n: int, what: str, key: str) -> list[str]:
    return [f"{n:,} more {what} not listed here: all of them are under `{key}` in the JSON report.", ""] if n > 0 else []


def _rule_link(rid: str) -> str:
    """A link to the rule's section in this document (GitHub and most renderers slug a
    heading `CU101` to `#cu101`)."""
    return f"[{rid}](#{rid.lower()})"


def _rule_section(rule: dict[str, Any]) -> list[str]:
    out = [f"### {rule['id']}", "", f"**{_esc(rule['name'] or rule['id'])}** ({rule['severity'] or 'unknown'}, "
           f"transfer_to_npu: `{rule['transfer']}`)", ""]
    for label, key in (("Why", "why"), ("Fix", "how")):
        text = " ".join(str(rule.get(key) or "").split())
        if text:
            out += [f"{label}: {text}", ""]
    if rule.get("after"):
        out += ["```python", rule["after"].rstrip(), "```", ""]
    return out


def _by_file(findings: Sequence[dict[str, Any]]) -> Iterable[tuple[str, list[dict[str, Any]]]]:
    groups: dict[str, list[dict[str, Any]]] = {}
    for f in findings:
        groups.setdefault(f["path"], []).append(f)
    for path in sorted(groups):
        yield path, groups[path]


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    numeric = [all(isinstance(r[i], int) for r in rows) and rows for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if numeric[i] else "---" for i in range(len(header))) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    lines.append("")
    return lines


def _esc(text: str) -> str:
    """Make text safe inside a table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(text: str) -> str:
    """Text for use inside a `code span` in a table cell."""
    return " ".join(str(text).split()).replace("`", "'").replace("|", "\\|")


def _link(label: str, url: str) -> str:
    return f"[{label}]({url})" if url else label


def _cell(text: str) -> str:
    """Plain text for a table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"
