"""Scan reports: terminal text, JSON (canonical), Markdown, SARIF 2.1.0 and CSV.

Every format is rendered from the JSON report (`json_report.to_json`), so `render` accepts
either a fresh `ScanResult` or a report dict loaded from a saved JSON file.
"""
from __future__ import annotations

from typing import Any, Optional

from ascend_migrate.knowledge.base import KnowledgeBase
from ascend_migrate.scan.api import ScanResult

FORMATS = ("text", "json", "md", "sarif", "csv")


def render(
    result: "ScanResult | dict[str, Any]",
    fmt: str,
    kb: Optional[KnowledgeBase] = None,
    *,
    color: bool = False,
    sarif_options: Optional[dict[str, Any]] = None,
    summary: bool = False,
) -> str:
    """The report in one of FORMATS as text. `color` applies to "text" only; `sarif_options`
    (`source_root`, `docs_base`, ...) to "sarif" only; `summary` (the summary sections alone,
    bounded) to "md" only."""
    from ascend_migrate.report import csv_report, json_report, markdown, sarif, terminal

    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}")
    report = json_report.as_report(result, kb)
    if fmt == "text":
        return terminal.summary(report, kb, color=color)
    if fmt == "json":
        return json_report.report_text(report)
    if fmt == "md":
        return markdown.to_markdown(report, kb, summary=summary)
    if fmt == "sarif":
        return sarif.dumps(report, kb, **(sarif_options or {}))
    return csv_report.to_csv(report, kb)


__all__ = ["FORMATS", "render"]
