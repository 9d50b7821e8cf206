"""The canonical JSON scan report (schema `ascend-migrate/scan/1`).

Every other format (Markdown, SARIF, CSV, the terminal summary) is rendered from the dict
`to_json` returns, so a saved `report.json` can be re-rendered later without re-scanning.
The shape is described by `scan-report.schema.json`, shipped next to this module.

Conventions:
- paths are POSIX and relative to `root`;
- `line`/`end_line` are 1-based, `col`/`end_col` are 0-based character offsets (as in `ast`);
- `fingerprint` identifies a finding across runs: it survives line shifts and
  re-indentation (see `fingerprints`).

Effort estimate: each finding costs `EFFORT_MINUTES[rule.effort]` minutes, except that the
rules in `PER_FILE_EFFORT_RULES` are counted once per (rule, file) pair: porting a `.cu`
file, replacing the CUDA packages of one requirements file or the CUDA imports of one
module, or repairing one unparsable file is one piece of work however many findings it has.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

from ascend_migrate import __version__
from ascend_migrate.report import json_text
from ascend_migrate.knowledge.base import EFFORT_MINUTES, EFFORTS, SEVERITIES, TRANSFER, KnowledgeBase, Rule
from ascend_migrate.printable import printable
from ascend_migrate.scan.api import ScanResult
from ascend_migrate.scan.finding import Finding
from ascend_migrate.scan.walk import display

SCHEMA_ID = "ascend-migrate/scan/1"
SCHEMA_PATH = Path(__file__).with_name("scan-report.schema.json")
TOOL_NAME = "ascend-migrate"
# Rules whose manual effort is paid once per file, not once per finding.
PER_FILE_EFFORT_RULES = frozenset({"EX001", "EX002", "PK001", "PK002", "SC001"})
UNKNOWN = "unknown"  # category/transfer/effort of a rule id the knowledge base does not know
FINGERPRINT_KEY = "ascendMigrate/v1"


def to_json(result: ScanResult, kb: Optional[KnowledgeBase] = None) -> dict[str, Any]:
    """The canonical report for one scan, as plain JSON-ready data."""
    kb = resolve_kb(kb)
    return _readable_if_needed(assemble(header(result), finding_dicts(result.findings, kb),
                                        [asdict(e) for e in result.entry_points],
                                        [asdict(e) for e in result.rejected_entry_points],
                                        [asdict(n) for n in result.notes], kb))


def header(result: ScanResult) -> dict[str, Any]:
    """The report's scalars that come from the scan as a whole."""
    return {"root": str(result.root), "torch_npu_version": result.torch_npu_version,
            "files_scanned": result.files_scanned, "lines_scanned": result.lines_scanned,
            "duration_s": result.duration_s}


def finding_dicts(findings: Iterable[Finding], kb: KnowledgeBase) -> list[dict[str, Any]]:
    """The report's finding records, in report order, each with its fingerprint."""
    ordered = sorted(findings, key=Finding.sort_key)
    return [_finding(f, kb, fp) for f, fp in zip(ordered, fingerprints(ordered))]


def assemble(head: dict[str, Any], findings: list[dict[str, Any]], entry_points: list[dict[str, Any]],
             rejected: list[dict[str, Any]], notes: list[dict[str, Any]], kb: KnowledgeBase) -> dict[str, Any]:
    """The report from its parts. Everything it derives from the findings (counts, effort, files,
    rules, plans) reads only the fields a finding record shares with its summary form
    (`SUMMARY_FIELDS`), so a report can be assembled again from those alone
    (scan/report_ledger.py) and only the `findings` array written from stored text."""
    return {
        "schema": SCHEMA_ID,
        "tool": {"name": TOOL_NAME, "version": __version__},
        "root": head["root"],
        "torch_npu_version": head["torch_npu_version"],
        "files_scanned": head["files_scanned"],
        "lines_scanned": head["lines_scanned"],
        "duration_s": round(head["duration_s"], 3),
        "counts": _counts(findings),
        "effort": effort_estimate(findings),
        "files": _files(findings),
        "rules": {rid: rule_record(kb, rid) for rid in sorted({f["rule"] for f in findings})},
        "findings": findings,
        "entry_points": entry_points,
        "rejected_entry_points": rejected,
        "notes": notes,
        "frameworks": framework_plans(findings, kb),
    }


# The fields of a finding record that the report's summaries (and the terminal summary) read.
SUMMARY_FIELDS = ("rule", "path", "line", "col", "severity", "message", "symbol", "category", "effort", "transfer")


# Findings that decide whether a framework's port can start at all (versions without Ascend
# support, GPU builds of the framework): listed first in each plan.
BLOCKER_KINDS = frozenset({"framework-pin"})


def synced_note(version: str) -> str:
    """For text reports: where the coverage of `version` was read from when `kb sync` wrote it
    (a file from a wheel, standing in for or beside the packaged knowledge); '' otherwise."""
    if not version:
        return ""
    try:
        from ascend_migrate.knowledge.coverage import synced_file
    except ImportError:
        return ""
    path = synced_file(version)
    return f" (from {printable(str(path))}, written by `kb sync`)" if path is not None else ""


def plans_to_show(plans: list[dict[str, Any]]) -> bool:
    """Is a per-framework section worth printing: more than one framework has work, or the one
    that has is not PyTorch (the generic report already is PyTorch's plan)?"""
    busy = [p for p in plans if p["findings"]]
    return len(busy) > 1 or any(p["key"] != "pytorch" for p in busy)


def framework_plans(findings: list[dict[str, Any]], kb: KnowledgeBase) -> list[dict[str, Any]]:
    """One plan per framework the project uses (from the FW001 findings), in the order PyTorch,
    TensorFlow, ... of the knowledge base. A finding belongs to the framework whose `categories`
    hold its rule's category; findings of generic categories (devices, packages, env vars) go to
    PyTorch when it is present, else to the only framework, else to none. A framework without
    findings (TensorFlow imported once in a weight-conversion helper) gets no steps."""
    present = {f["symbol"] for f in findings if f["rule"] == "FW001"}
    messages = {f["symbol"]: f["message"] for f in findings if f["rule"] == "FW001"}
    where = {f["symbol"]: f"{f['path']}:{f['line']}" for f in findings if f["rule"] == "FW001"}
    frameworks = [fw for fw in kb.frameworks if fw.label in present]
    if not frameworks:
        return []
    owner = {cat: fw.key for fw in frameworks for cat in fw.categories}
    default = next((fw.key for fw in frameworks if fw.key == "pytorch"), frameworks[0].key if len(frameworks) == 1 else None)
    groups: dict[str, list[dict[str, Any]]] = {fw.key: [] for fw in frameworks}
    for f in findings:
        if f["rule"] == "FW001":
            continue
        key = owner.get(f["category"], default)
        if key is not None:
            groups[key].append(f)
    kinds: dict[str, bool] = {}

    def blocks(rule_id: str) -> bool:
        """Does a finding of this rule decide whether the port can start (BLOCKER_KINDS)?"""
        if rule_id not in kinds:
            rule = rule_meta(kb, rule_id)
            kinds[rule_id] = rule is not None and rule.match.get("kind") in BLOCKER_KINDS
        return kinds[rule_id]

    plans = []
    for fw in frameworks:
        group = groups[fw.key]
        # the scan words FW001 for a device-agnostic port (engine.is_agnostic_port); the plan follows
        # it, so a saved report renders the same plan again
        agnostic = bool(fw.guidance_agnostic) and fw.guidance_agnostic in messages[fw.label]
        guidance = fw.guidance_agnostic if agnostic else fw.guidance
        steps = list(fw.plan_agnostic if agnostic and fw.plan_agnostic else fw.plan) or [guidance]
        blockers = [f for f in group if blocks(f["rule"])]
        plans.append({
            "key": fw.key,
            "label": fw.label,
            "first_seen": where[fw.label],
            "guidance": guidance,
            "findings": len(group),
            "by_severity": _zero_filled(Counter(f["severity"] for f in group), SEVERITIES),
            "by_rule": dict(sorted(Counter(f["rule"] for f in group).items())),
            "blockers": [{"rule": f["rule"], "path": f["path"], "line": f["line"], "message": f["message"]}
                         for f in blockers],
            # a plan only where there is work: a framework imported once with nothing to port gets none
            "steps": steps if group else [],
        })
    return plans


def readable(data: Any) -> Any:
    """`data` with every string printable as UTF-8: bytes a file name or file held that are not
    UTF-8 (kept as surrogate escapes while scanning) are shown as `\\xNN`."""
    if isinstance(data, str):
        return display(data)
    if isinstance(data, dict):
        return {readable(k): readable(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [readable(v) for v in data]
    return data


_SURROGATE = re.compile("[\ud800-\udfff]")


def _readable_if_needed(report: dict[str, Any]) -> dict[str, Any]:
    """`readable(report)`, skipped when no string in the report holds a surrogate escape (then
    it would change nothing): one compact encoding and one search instead of a copy of
    every dict, list and string of the report."""
    text = json.dumps(report, ensure_ascii=False, check_circular=False, separators=(",", ":"))
    return readable(report) if _SURROGATE.search(text) else report


def dumps(result: ScanResult, kb: Optional[KnowledgeBase] = None, indent: Optional[int] = 2) -> str:
    """`to_json` as text (UTF-8 safe, stable key order)."""
    return json.dumps(to_json(result, kb), indent=indent, ensure_ascii=False) + "\n"


def report_text(report: dict[str, Any]) -> str:
    """The report as indented JSON text, byte for byte `json.dumps(report, indent=2,
    ensure_ascii=False) + "\n"`, written as the rest of the report with each finding's text
    put in place of the `findings` array. A finding's text does not depend on its neighbours
    (`finding_text`), so a report can be written again from stored finding texts with only
    the changed ones encoded (scan/report_ledger.py)."""
    return report_text_and_items(report)[0]


def report_text_and_items(report: dict[str, Any]) -> tuple[str, Optional[list[str]]]:
    """`report_text` and the texts of its findings it was written from (None when it had to be
    written the plain way: then it cannot be written again from them either)."""
    items = [finding_text(f) for f in report["findings"]]
    text = skeleton_text(report, findings_array(items))
    if text is None:
        return json_text.dumps(report) + "\n", None
    return text, items


def finding_text(finding: dict[str, Any]) -> str:
    """One finding record as it appears inside the indented report's `findings` array."""
    return json_text.dumps(finding, level=2)


def findings_array(items: list[str]) -> str:
    """The `findings` array of the indented report from its items' texts (`finding_text`)."""
    return "[\n    " + ",\n    ".join(items) + "\n  ]" if items else "[]"


_HOLE = "\x00findings\x00"  # no report string holds a NUL: paths and source text cannot


def skeleton_text(report: dict[str, Any], array: str) -> Optional[str]:
    """`report` as indented JSON with `array` (the text of its findings array) in place, or None
    when a string of the report spells the stand-in for the array (then only the plain way,
    encoding the findings themselves, can write it)."""
    text = json_text.dumps({**report, "findings": _HOLE})
    hole = json.dumps(_HOLE)
    if text.count(hole) != 1:
        return None
    return text.replace(hole, array) + "\n"


def load_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) the report conforms to."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def as_report(data: "ScanResult | dict[str, Any]", kb: Optional[KnowledgeBase] = None) -> dict[str, Any]:
    """Accept a ScanResult or an already-built (or loaded) report dict; return the report."""
    if isinstance(data, ScanResult):
        return to_json(data, kb)
    if isinstance(data, dict) and data.get("schema") == SCHEMA_ID:
        return data
    raise TypeError(f"expected a ScanResult or a {SCHEMA_ID} report, got {type(data).__name__}")


# --------------------------------------------------------------------------- fingerprints
def fingerprint_text(finding: Finding) -> str:
    """What identifies a finding's code independent of where it sits: the source snippet
    with whitespace collapsed, plus the symbol with digit runs masked (symbols of some
    findings, e.g. parse errors, embed line numbers)."""
    snippet = " ".join(finding.snippet.split())
    symbol = re.sub(r"\d+", "#", " ".join(finding.symbol.split()))
    return f"{snippet}\0{symbol}"


def fingerprints(findings: Sequence[Finding]) -> list[str]:
    """A stable id per finding: hash of rule, path, `fingerprint_text` and the occurrence
    index of that triple in position order (so identical lines in one file stay distinct).

    Inserting or deleting lines elsewhere in the file, or re-indenting, changes no fingerprint.
    """
    order = sorted(range(len(findings)), key=lambda i: findings[i].sort_key())
    seen: Counter = Counter()
    out = [""] * len(findings)
    for i in order:
        f = findings[i]
        triple = (f.rule, f.path, fingerprint_text(f))
        index = seen[triple]
        seen[triple] += 1
        material = "\0".join((*triple, str(index)))
        out[i] = hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return out


# --------------------------------------------------------------------------- effort
def effort_estimate(findings: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Minutes of manual work for report findings (dicts with rule, path, effort)."""
    units: Counter = Counter()
    seen: set[tuple[str, str]] = set()
    for f in findings:
        if f["rule"] in PER_FILE_EFFORT_RULES:
            key = (f["rule"], f["path"])
            if key in seen:
                continue
            seen.add(key)
        units[f["effort"]] += 1
    minutes = sum(EFFORT_MINUTES.get(level, 0) * n for level, n in units.items())
    return {
        "minutes": minutes,
        "hours": round(minutes / 60, 1),
        "units": {level: units.get(level, 0) for level in EFFORTS},
        "minutes_per_unit": dict(EFFORT_MINUTES),
        "per_file_rules": sorted(PER_FILE_EFFORT_RULES),
    }


# --------------------------------------------------------------------------- helpers
def resolve_kb(kb: Optional[KnowledgeBase]) -> KnowledgeBase:
    if kb is not None:
        return kb
    from ascend_migrate.knowledge.base import load_knowledge

    return load_knowledge()


def rule_meta(kb: KnowledgeBase, rule_id: str) -> Optional[Rule]:
    try:
        return kb.rule(rule_id)
    except KeyError:
        return None


def rule_record(kb: KnowledgeBase, rule_id: str) -> dict[str, Any]:
    rule = rule_meta(kb, rule_id)
    if rule is None:
        return {"id": rule_id, "name": "", "category": UNKNOWN, "severity": "", "confidence": "",
                "transfer": UNKNOWN, "effort": UNKNOWN, "fix": {}, "npu": "", "agnostic": "",
                "message": "", "why": "", "how": "", "before": "", "after": "", "doc_url": ""}
    return {
        "id": rule.id, "name": rule.name, "category": rule.category, "severity": rule.severity,
        "confidence": rule.confidence, "transfer": rule.transfer, "effort": rule.effort,
        "fix": dict(rule.fix), "npu": rule.npu, "agnostic": rule.agnostic, "message": rule.message,
        "why": rule.why.strip(), "how": rule.how.strip(), "before": rule.before, "after": rule.after,
        "doc_url": rule.help_uri(),
    }


def rule_columns(kb: KnowledgeBase, rule_id: str) -> tuple[str, str, str]:
    """The (category, transfer, effort) a finding of this rule carries in the report."""
    rule = rule_meta(kb, rule_id)
    return (rule.category, rule.transfer, rule.effort) if rule else (UNKNOWN, UNKNOWN, UNKNOWN)


def _finding(f: Finding, kb: KnowledgeBase, fingerprint: str) -> dict[str, Any]:
    data = f.to_dict()
    rule = rule_meta(kb, f.rule)
    category, transfer, effort = rule_columns(kb, f.rule)
    data.update(
        name=rule.name if rule else "",
        category=category,
        transfer=transfer,
        effort=effort,
        doc_url=rule.help_uri() if rule else "",
        fingerprint=fingerprint,
    )
    return data


def _zero_filled(counter: Counter, keys: Sequence[str]) -> dict[str, int]:
    out = {k: counter.get(k, 0) for k in keys}
    for k in sorted(counter):
        if k not in out:
            out[k] = counter[k]
    return out


def _counts(findings: list[dict[str, Any]]) -> dict[str, Any]:
    by_category: dict[str, Counter] = {}
    for f in findings:
        counter = by_category.get(f["category"])
        if counter is None:
            counter = by_category[f["category"]] = Counter()
        counter[f["severity"]] += 1
    return {
        "findings": len(findings),
        "files_with_findings": len({f["path"] for f in findings}),
        "by_severity": _zero_filled(Counter(f["severity"] for f in findings), SEVERITIES[::-1]),
        "by_category": {c: sum(by_category[c].values()) for c in sorted(by_category)},
        "by_category_severity": {c: _zero_filled(by_category[c], SEVERITIES[::-1]) for c in sorted(by_category)},
        "by_rule": dict(sorted(Counter(f["rule"] for f in findings).items())),
        "by_effort": _zero_filled(Counter(f["effort"] for f in findings), EFFORTS),
        "by_transfer": _zero_filled(Counter(f["transfer"] for f in findings), TRANSFER),
    }


def _files(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-file counts, most findings first (then errors, then path)."""
    per: dict[str, Counter] = {}
    for f in findings:
        counter = per.get(f["path"])
        if counter is None:
            counter = per[f["path"]] = Counter()
        counter[f["severity"]] += 1
    rows = [{"path": p, "findings": sum(c.values()), "by_severity": _zero_filled(c, SEVERITIES[::-1])}
            for p, c in per.items()]
    rows.sort(key=lambda r: (-r["findings"], -r["by_severity"]["error"], r["path"]))
    return rows
