"""SARIF 2.1.0 output for code-scanning UIs (GitHub code scanning, VS Code SARIF viewer).

Built from the canonical JSON report. What GitHub needs is honoured: stable `ruleId`s, rule
metadata in `tool.driver.rules`, repo-relative `artifactLocation.uri` with `uriBaseId`
`%SRCROOT%`, `partialFingerprints` (so re-uploads do not duplicate alerts) and its limits
(results per run are capped at `MAX_RESULTS`, most severe kept).

Columns: SARIF columns are 1-based and `endColumn` points one past the region; the run
declares `columnKind: unicodeCodePoints`, matching the scanner's character offsets.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from ascend_migrate.knowledge.base import KnowledgeBase
from ascend_migrate.report.json_report import FINGERPRINT_KEY, TOOL_NAME, as_report, resolve_kb, rule_record
from ascend_migrate.scan.api import ScanResult

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
SRCROOT = "%SRCROOT%"
# Absolute base for rule documentation links (`<base>references/rules.md#cu101`). Empty or
# relative: no helpUri and no informationUri (SARIF requires both to be absolute URIs); the
# rule's documentation is carried inline in `help.text` / `help.markdown` instead.
DOCS_BASE_URL = ""
MAX_RESULTS = 25_000  # GitHub code scanning: results per run
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
_SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}


def to_sarif(
    result: "ScanResult | dict[str, Any]",
    kb: Optional[KnowledgeBase] = None,
    *,
    style: str = "transfer",
    all_rules: bool = False,
    docs_base: Optional[str] = None,
    source_root: "Optional[str | Path]" = None,
) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run.

    `style` picks which fixes become SARIF `fixes` ("transfer" or "agnostic");
    `all_rules` lists every known rule in the driver, not only those that fired;
    `docs_base` is an absolute URL prefix for rule docs (default `DOCS_BASE_URL`; ignored
    unless absolute); `source_root` is the folder artifact URIs are relative to (e.g. the
    repository root when a subfolder was scanned; default: the scanned folder).
    """
    report = as_report(result, kb)
    base = DOCS_BASE_URL if docs_base is None else docs_base
    if not _is_absolute(base):
        base = ""
    scan_dir = _scan_dir(report["root"])
    root_dir = scan_dir if source_root is None else Path(source_root).resolve()
    prefix = _prefix(scan_dir, root_dir)
    rules_meta = dict(report["rules"])
    if all_rules:
        knowledge = resolve_kb(kb)
        for rid in knowledge.rules:
            rules_meta.setdefault(rid, rule_record(knowledge, rid))
    rule_ids = sorted(rules_meta)
    index = {rid: i for i, rid in enumerate(rule_ids)}

    findings = report["findings"]
    omitted = 0
    if len(findings) > MAX_RESULTS:
        keep = sorted(range(len(findings)),
                      key=lambda i: (_SEVERITY_RANK.get(findings[i]["severity"], 3), i))[:MAX_RESULTS]
        omitted = len(findings) - MAX_RESULTS
        findings = [findings[i] for i in sorted(keep)]

    driver: dict[str, Any] = {
        "name": TOOL_NAME,
        "version": report["tool"]["version"],
        "semanticVersion": report["tool"]["version"],
        "rules": [_rule_descriptor(rules_meta[rid], base) for rid in rule_ids],
    }
    if base:
        driver["informationUri"] = base
    invocation: dict[str, Any] = {"executionSuccessful": True}
    notifications = [
        {"level": "warning", "message": {"text": f"{n['path']}: {n['reason']}"},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": prefix + _uri(n["path"]), "uriBaseId": SRCROOT}}}]}
        for n in report["notes"]
    ]
    if omitted:
        notifications.append({"level": "warning", "message": {
            "text": f"{omitted} less severe results omitted to stay within {MAX_RESULTS} results per run; "
                    "see the JSON report for all findings"}})
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "invocations": [invocation],
        "originalUriBaseIds": {SRCROOT: {"uri": _dir_uri(root_dir)}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, index[f["rule"]], style, prefix) for f in findings],
        "properties": {
            "torchNpuVersion": report["torch_npu_version"],
            "filesScanned": report["files_scanned"],
            "linesScanned": report["lines_scanned"],
            "effortHours": report["effort"]["hours"],
            "transferCoverage": report["counts"]["by_transfer"],
            "omittedResults": omitted,
        },
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def dumps(result: "ScanResult | dict[str, Any]", kb: Optional[KnowledgeBase] = None, **options: Any) -> str:
    """`to_sarif` as compact-but-readable JSON text."""
    return json.dumps(to_sarif(result, kb, **options), indent=1, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------- pieces
def _rule_descriptor(rule: dict[str, Any], base: str) -> dict[str, Any]:
    rid = rule["id"]
    doc = rule["doc_url"]
    title = _title(rule["name"]) or rid
    descriptor: dict[str, Any] = {
        "id": rid,
        "name": _pascal(rule["name"]) or rid,
        "shortDescription": {"text": title},
        "fullDescription": {"text": rule["why"] or _plain(rule["message"]) or title},
        "help": {"text": _help_text(rule), "markdown": _help_markdown(rule)},
        "defaultConfiguration": {"level": LEVELS.get(rule["severity"], "warning")},
        "properties": {
            "category": rule["category"],
            "effort": rule["effort"],
            "transfer": rule["transfer"],
            "tags": ["ascend", "npu-migration", rule["category"]],
        },
    }
    if doc and base:
        descriptor["helpUri"] = base + doc
    return descriptor


def _title(name: str) -> str:
    """`device-capability-query` -> `Device capability query`."""
    words = name.replace("_", "-").split("-")
    text = " ".join(w for w in words if w)
    return text[:1].upper() + text[1:]


def _plain(message: str) -> str:
    """A message template without its `{placeholders}`: a rule descriptor describes the rule,
    not one finding, so `{symbol}` and friends become generic words."""
    import re

    text = re.sub(r"`[^`]*\{[a-z_]+\}[^`]*`", "this call", message or "")
    return re.sub(r"\{[a-z_]+\}", "it", text)


def _is_absolute(uri: Optional[str]) -> bool:
    from urllib.parse import urlparse

    return bool(uri) and bool(urlparse(uri).scheme) and bool(urlparse(uri).netloc or urlparse(uri).path)


def _pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.replace("_", "-").split("-") if part)


def _help_text(rule: dict[str, Any]) -> str:
    parts = [_title(rule["name"]), rule["why"], rule["how"] or _plain(rule["message"])]
    if rule["npu"]:
        parts.append(f"NPU: {rule['npu']}")
    if rule["before"]:
        parts.append("Before:\n" + rule["before"].rstrip())
    if rule["after"]:
        parts.append("After:\n" + rule["after"].rstrip())
    return "\n\n".join(p for p in parts if p)


def _help_markdown(rule: dict[str, Any]) -> str:
    parts = [f"**{rule['id']}: {_title(rule['name'])}**", rule["how"] or _plain(rule["message"])]
    if rule["why"]:
        parts.append(f"**Why:** {rule['why']}")
    if rule["npu"]:
        parts.append(f"**NPU:** {rule['npu']}")
    if rule["transfer"]:
        parts.append(f"**transfer_to_npu:** {rule['transfer']}")
    if rule["before"]:
        parts.append("Before:\n\n```python\n" + rule["before"].rstrip() + "\n```")
    if rule["after"]:
        parts.append("After:\n\n```python\n" + rule["after"].rstrip() + "\n```")
    return "\n\n".join(p for p in parts if p)


def _region(line: int, col: int, end_line: int, end_col: int) -> dict[str, Any]:
    start_line = max(1, line)
    region: dict[str, Any] = {"startLine": start_line, "startColumn": col + 1}
    end_line = max(start_line, end_line)
    if (end_line, end_col) > (start_line, col):
        region["endLine"] = end_line
        region["endColumn"] = end_col + 1
    return region


def _edit_region(start: list[int], end: list[int]) -> dict[str, Any]:
    # A deleted region is exact even when empty (an insertion point).
    return {"startLine": max(1, start[0]), "startColumn": start[1] + 1,
            "endLine": max(1, end[0]), "endColumn": end[1] + 1}


def _result(f: dict[str, Any], rule_index: int, style: str, prefix: str = "") -> dict[str, Any]:
    uri = prefix + _uri(f["path"])
    out: dict[str, Any] = {
        "ruleId": f["rule"],
        "ruleIndex": rule_index,
        "level": LEVELS.get(f["severity"], "warning"),
        "message": {"text": f["message"] or f["rule"]},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": uri, "uriBaseId": SRCROOT},
            "region": _region(f["line"], f["col"], f["end_line"], f["end_col"]),
        }}],
        "partialFingerprints": {FINGERPRINT_KEY: f["fingerprint"]},
        "properties": {
            "confidence": f["confidence"],
            "transfer": f["transfer"],
            "effort": f["effort"],
            "category": f["category"],
        },
    }
    if f["snippet"]:
        out["locations"][0]["physicalLocation"]["region"]["snippet"] = {"text": f["snippet"]}
    if f["symbol"]:
        out["properties"]["symbol"] = f["symbol"]
    fix = next((x for x in f["fixes"] if x["style"] == style and x["edits"]), None)
    if fix is not None:
        description = fix["description"] or f"{style} rewrite"
        if fix["safety"] != "safe":
            description += " (unsafe: review the change)"
        if fix["requires"]:
            description += f"; the file also needs: {', '.join(fix['requires'])}"
        out["fixes"] = [{
            "description": {"text": description},
            "artifactChanges": [{
                "artifactLocation": {"uri": uri, "uriBaseId": SRCROOT},
                "replacements": [
                    {"deletedRegion": _edit_region(e["start"], e["end"]), "insertedContent": {"text": e["text"]}}
                    for e in fix["edits"]
                ],
            }],
        }]
    return out


def _uri(path: str) -> str:
    """A relative URI reference. Name bytes that are not UTF-8 (shown as `\\xNN` in the report)
    are percent-encoded as the bytes they are, so the URI names the real file."""
    import re
    from urllib.parse import quote

    parts = re.split(r"\\x([89a-fA-F][0-9a-fA-F])", path)
    raw = b"".join(bytes([int(p, 16)]) if i % 2 else p.replace("\\", "/").encode("utf-8")
                   for i, p in enumerate(parts))
    return quote(raw.lstrip(b"/"), safe="/")


def _scan_dir(root: str) -> Path:
    path = Path(root).resolve()
    return path.parent if path.is_file() else path


def _prefix(scan_dir: Path, root_dir: Path) -> str:
    """The scanned folder as a URI prefix relative to `root_dir` ("" when they are the same)."""
    try:
        rel = scan_dir.relative_to(root_dir)
    except ValueError:
        raise ValueError(f"SARIF source root {root_dir} does not contain the scanned path {scan_dir}") from None
    return "" if rel == Path(".") else _uri(rel.as_posix()) + "/"


def _dir_uri(path: Path) -> str:
    uri = path.as_uri()
    return uri if uri.endswith("/") else uri + "/"
