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
from ascend_migrate.knowledge.base import EFFORT_MINUTES, EFFORTS, SEVERITIES, TRANSFER, KnowledgeBase, Rule
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
    ordered = sorted(result.findings, key=Finding.sort_key)
    prints = fingerprints(ordered)
    findings = [_finding(f, kb, fp) for f, fp in zip(ordered, prints)]
    return _readable_if_needed({
        "schema": SCHEMA_ID,
        "tool": {"name": TOOL_NAME, "version": __version__},
        "root": str(result.root),
        "torch_npu_version": result.torch_npu_version,
        "files_scanned": result.files_scanned,
        "lines_scanned": result.lines_scanned,
        "duration_s": round(result.duration_s, 3),
        "counts": _counts(findings),
        "effort": effort_estimate(findings),
        "files": _files(findings),
        "rules": {rid: rule_record(kb, rid) for rid in sorted({f["rule"] for f in findings})},
        "findings": findings,
        "entry_points": [asdict(e) for e in result.entry_points],
        "rejected_entry_points": [asdict(e) for e in result.rejected_entry_points],
        "notes": [asdict(n) for n in result.notes],
        "frameworks": framework_plans(findings, kb),
    })


# Findings that decide whether a framework's port can start at all (versions without Ascend
# support, GPU builds of the framework): listed first in each plan.
BLOCKER_KINDS = frozenset({"framework-pin"})


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
    plans = []
    for fw in frameworks:
        group = groups[fw.key]
        # the scan words FW001 for a device-agnostic port (engine.is_agnostic_port); the plan follows
        # it, so a saved report renders the same plan again
        agnostic = bool(fw.guidance_agnostic) and fw.guidance_agnostic in messages[fw.label]
        guidance = fw.guidance_agnostic if agnostic else fw.guidance
        steps = list(fw.plan_agnostic if agnostic and fw.plan_agnostic else fw.plan) or [guidance]
        blockers = [f for f in group if (rule_meta(kb, f["rule"]) is not None
                                         and rule_meta(kb, f["rule"]).match.get("kind") in BLOCKER_KINDS)]
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


def _finding(f: Finding, kb: KnowledgeBase, fingerprint: str) -> dict[str, Any]:
    data = f.to_dict()
    rule = rule_meta(kb, f.rule)
    data.update(
        name=rule.name if rule else "",
        category=rule.category if rule else UNKNOWN,
        transfer=rule.transfer if rule else UNKNOWN,
        effort=rule.effort if rule else UNKNOWN,
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
        by_category.setdefault(f["category"], Counter())[f["severity"]] += 1
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
        per.setdefault(f["path"], Counter())[f["severity"]] += 1
    rows = [{"path": p, "findings": sum(c.values()), "by_severity": _zero_filled(c, SEVERITIES[::-1])}
            for p, c in per.items()]
    rows.sort(key=lambda r: (-r["findings"], -r["by_severity"]["error"], r["path"]))
    return rows
